// Prefix cache on the hybrid test model (lfm2: short convolutions + attention, a state that
// cannot be cut back: snapshots at message boundaries); cases in tests/lib/prefix_cache_cases.mjs.
import { prefixCacheCases } from '../lib/prefix_cache_cases.mjs';

prefixCacheCases('lfm2');
