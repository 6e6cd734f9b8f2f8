// Prefix cache memory budget: 200 distinct system prompts keep the cache within --cache-ram, on
// the transformer and the hybrid test model (cases in tests/lib/prefix_cache_cases.mjs).
import { budgetCase } from '../lib/prefix_cache_cases.mjs';

budgetCase('qwen3');
budgetCase('lfm2');
