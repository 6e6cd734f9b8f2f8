// `superfluid bench`: every scenario end to end in a reduced size (tiny model, small N, short
// documents), against Superfluid and, when its binary exists, llama-server; then the
// results.json figures are checked for presence and consistency. No timing thresholds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SUPERFLUID, model, startServer } from '../lib/server.mjs';

const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), 'sf-bench-test-'));

function findLlamaServer() {
  if (process.env.LLAMA_SERVER_BIN) return process.env.LLAMA_SERVER_BIN;
  const cache = join(homedir(), '.cache', 'superfluid');
  if (!existsSync(cache)) return null;
  for (const d of readdirSync(cache)) {
    const p = join(cache, d, 'build', 'bin', 'llama-server');
    if (d.startsWith('llama.cpp-') && existsSync(p)) return p;
  }
  return null;
}
const LLAMA = findLlamaServer();

// The reduced sizes: seconds per scenario on 2 cores. `--ctx-size 2048 --parallel 4` are the
// bench's own options, its shape: both servers it starts get that context and slot count
// (llama-server `-c 8192 -np 4`), and `cluster` sizes its levels and streams from --parallel.
const SMALL = [
  '--agents', '2', '--doc-tokens', '300', '--agent-max-tokens', '16', '--chat-at', '0.2',
  '--kill-after', '8', '--stream-tokens', '32',
  '--prefix-requests', '3', '--prefix-tokens', '200', '--prefix-concurrency', '2',
  '--concurrency', '1', '--concurrency', '3', '--throughput-tokens', '8',
  '--system-bytes', '800', '--burst', '4', '--burst', '8', '--burst-tokens', '4',
  '--short-tokens', '4', '--ctx-size', '2048', '--parallel', '4', '--no-progress',
  // endurance: 2 trajectories (--agents) of 4 tool calls, ~600 → ~1,500 tokens, turn 2 dropped
  '--turns', '4', '--start-tokens', '600', '--result-tokens-min', '100', '--result-tokens-max', '150',
  '--interrupt-at', '2',
];

/**
 * Runs `superfluid bench SCENARIO` at the SMALL sizes (then `extra`, which override them) on
 * the test model, against llama-server too when `peer` and its binary exists, or on
 * `target.url`; returns results.json.
 */
async function bench(scenario, target, extra = [], { peer = true, tag = '' } = {}) {
  const dir = join(out, scenario + (target.url ? '-url' : '') + tag);
  // CLI11 takes an option once: `extra`'s options replace SMALL's (all but --no-progress take a value).
  const base = [];
  for (let i = 0; i < SMALL.length; i += SMALL[i] === '--no-progress' ? 1 : 2) {
    if (!extra.includes(SMALL[i])) base.push(...SMALL.slice(i, SMALL[i] === '--no-progress' ? i + 1 : i + 2));
  }
  const args = ['bench', scenario, ...base, ...extra, '--out', dir];
  if (target.url) args.push('--url', target.url);
  else {
    args.push('--model', model());
    if (LLAMA && peer) args.push('--against', 'llama-server', '--llama-server', LLAMA);
  }
  const { stdout } = await run(SUPERFLUID, args, { timeout: 170000, maxBuffer: 1 << 24 });
  const rec = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));
  assert.ok(existsSync(join(dir, 'report.md')), 'report.md written');
  assert.ok(readdirSync(dir).some((f) => f.endsWith('.svg')), 'an SVG chart written');
  assert.match(stdout, /figure/, 'the side-by-side table is printed');
  return rec;
}

/** A {"median","min","max"} summary, ordered; returns the median. */
function fig(v, name) {
  assert.ok(v && typeof v === 'object', `${name} present`);
  assert.ok(v.min <= v.median && v.median <= v.max, `${name}: min ≤ median ≤ max`);
  return v.median;
}

function common(rec, scenario, servers, { ratios = true } = {}) {
  assert.equal(rec.scenario, scenario);
  assert.equal(rec.runs, 1);
  assert.ok(rec.harness.requests > 0 && fig(rec.harness.total_s, 'harness.total_s') >= 0);
  assert.deepEqual(Object.keys(rec.servers).sort(), [...servers].sort());
  for (const name of servers) {
    const g = rec.per_run[0][name].gates;
    for (const k of ['early_stop', 'memory_pressure', 'duplicate_processes']) assert.ok([0, 1].includes(g[k]), `gate ${k}`);
    assert.equal(rec.per_run[0][name].error, undefined, `${name} measured`);
  }
  if (servers.includes('llama-server')) {
    if (ratios) assert.ok(rec.ratios['superfluid/llama-server'], 'ratios computed');
    assert.ok(fig(rec.servers['llama-server'].peak_rss_mib.server, 'llama rss') > 0);
  }
  if (servers.includes('superfluid')) {
    assert.match(rec.model.sha256, /^[0-9a-f]{64}$/);
    const rss = rec.servers.superfluid.peak_rss_mib;
    assert.ok(fig(rss.head, 'head rss') > 0 && fig(rss.worker, 'worker rss') > 0);
  }
}

const servers = ['superfluid', ...(LLAMA ? ['llama-server'] : [])];
const checks = {
  priority(s) {
    const ttft = fig(s.chat_ttft_s, 'chat_ttft_s');
    fig(s.chat_ttft_idle_s, 'chat_ttft_idle_s');
    assert.ok(ttft <= fig(s.chat_total_s, 'chat_total_s'));
    assert.ok(fig(s.agents_tokens_per_s, 'agents_tokens_per_s') > 0);
  },
  recovery(s) {
    fig(s.recovery_s, 'recovery_s');
    const cut = fig(s.stream_cut, 'stream_cut');
    assert.ok(cut === 0 || cut === 1);
    const ref = fig(s.tokens_reference, 'ref'), got = fig(s.tokens_received, 'received');
    const miss = fig(s.tokens_missing, 'missing'), dup = fig(s.tokens_duplicated, 'dup');
    fig(s.tokens_mismatched, 'mismatched');
    // Superfluid's loss is judged against its own journal (the session's text); a server
    // without one, by the tokens of the reference never received.
    const journal = s.text_equals_journal == null ? null : fig(s.text_equals_journal, 'text_equals_journal');
    if (journal === null) {
      assert.ok(miss === 0 || got === ref - miss + dup, 'received = reference - missing + duplicated');
    } else {
      assert.ok(journal === 0 || journal === 1);
      if (journal === 1) assert.equal(miss, 0, 'the received text is the journaled text: nothing missing');
    }
    assert.ok(miss >= 0 && miss <= ref);
  },
  prefix(s) {
    for (const v of ['sequential', 'concurrent', 'edit', 'restart']) {
      const x = s.variants[v];
      for (const k of ['hit_rate', 'hit_rate_max']) {
        const h = fig(x[k], `${v}.${k}`);
        assert.ok(h >= 0 && h <= 1, `${v}.${k} in [0,1]`);
      }
      fig(x.ttft_first_s, `${v}.ttft_first_s`);
      fig(x.ttft_rest_s, `${v}.ttft_rest_s`);
      // Tokens of requests 2..3 (--short-tokens 4 each) that no visible chunk showed.
      const u = fig(x.unshown_tokens, `${v}.unshown_tokens`);
      assert.ok(Number.isInteger(u) && u >= 0 && u <= 2 * 4, `${v}.unshown_tokens in [0, 8]`);
    }
  },
  throughput(s) {
    for (const c of [1, 3]) {
      assert.ok(fig(s[`tokens_per_s_c${c}`], `c${c}`) > 0);
      // Each request's decode rate, first token to last (the median over requests).
      assert.ok(fig(s[`decode_tokens_per_s_c${c}`], `decode c${c}`) > 0);
      assert.ok(fig(s[`ttft_p50_s_c${c}`], 'p50') <= fig(s[`ttft_p95_s_c${c}`], 'p95'));
    }
    assert.ok(fig(s.itl_p50_s, 'itl_p50_s') <= fig(s.itl_p95_s, 'itl_p95_s'));
    fig(s.ttft_p50_s, 'ttft_p50_s');
  },
  throughput_journal(s, name) {
    // The journal's cost: Superfluid only, journal off vs each sync level, as ratios to off.
    if (name !== 'superfluid') return;
    for (const m of ['journal_off', 'sync_off', 'sync_normal', 'sync_full']) {
      assert.ok(fig(s.journal[m].tokens_per_s, `${m}.tokens_per_s`) > 0);
      assert.ok(fig(s.journal[m].vs_off, `${m}.vs_off`) > 0);
    }
    assert.equal(fig(s.journal.journal_off.vs_off, 'off vs off'), 1);
  },
  agentic(s, controlled) {
    for (const k of ['ttft_cold_s', 'ttft_warm_s', 'ttft_prefix_s']) fig(s[k], k);
    // Verdicts follow the median TTFTs (issue #6: median prefix-test / cold < 0.2).
    const cold = fig(s.ttft_cold_s, 'ttft_cold_s');
    const yes = (t) => (t / cold < 0.2 ? 'YES' : 'NO');
    assert.equal(s.verdict_prefix, yes(fig(s.ttft_prefix_s, 'ttft_prefix_s')));
    if (controlled) {
      assert.equal(s.verdict_persistent, yes(fig(s.ttft_cold_prefix_s, 'ttft_cold_prefix_s')));
    }
  },
  burst(s) {
    for (const n of ['4', '8']) {
      const b = s.burst[n];
      const p50 = fig(b.p50_s, 'p50'), p95 = fig(b.p95_s, 'p95'), max = fig(b.max_s, 'max');
      assert.ok(p50 <= p95 && p95 <= max, 'p50 ≤ p95 ≤ max');
      assert.ok(max <= fig(b.wall_s, 'wall') + 1e-9);
      assert.equal(fig(b.errors, 'errors'), 0);
      // Whether answers overlap depends on timing (4-token answers 25-50 ms apart): only the
      // flag's consistency with the peak is checked here.
      const peak = fig(b.peak_generating, 'peak_generating');
      assert.ok(peak >= 1 && peak <= Number(n), `peak generating ${peak} of ${n}`);
      assert.equal(fig(b.fifo, 'fifo'), peak <= 1 ? 1 : 0);
      assert.ok(fig(b.tokens_per_s, 'tokens_per_s') > 0);
    }
  },
  endurance(s, controlled, name) {
    const calls = fig(s.calls, 'calls');
    assert.equal(calls, 4);
    const valid = fig(s.schema_valid_calls, 'schema_valid_calls');
    const bad = fig(s.malformed_calls, 'malformed') + fig(s.truncated_calls, 'truncated');
    assert.equal(fig(s.errors, 'errors'), 0);
    // 2 trajectories: valid is the worst one's count; every call is valid, malformed or truncated.
    assert.ok(valid >= 0 && valid <= calls);
    assert.equal(fig(s.schema_valid_fraction, 'fraction') * 2 * calls + bad, 2 * calls, 'calls add up');
    assert.ok(fig(s.context_tokens_last, 'last') > fig(s.context_tokens_first, 'first'), 'the context grows');
    fig(s.ttft_s, 'ttft_s');
    fig(s.ttft_slope_s_per_10k, 'ttft_slope_s_per_10k');
    const prefilled = fig(s.prefilled_tokens_per_turn, 'prefilled'), grown = fig(s.new_tokens_per_turn, 'new');
    assert.ok(grown > 0 && prefilled > 0);
    assert.equal(fig(s.interrupt_tokens_before_cut, 'before cut'), 2);
    assert.ok([0, 1].includes(fig(s.interrupt_consistent, 'consistent')));
    if (name === 'superfluid') {
      assert.equal(fig(s.interrupt_consistent, 'consistent'), 1, 'the re-attached answer continues the cut one');
      // The schema's grammar holds every call; a turn computes only what the last one added
      // (template tokens aside); the dropped answer is re-attached from the journal, not redone.
      assert.equal(valid, calls, 'every call valid against its schema');
      assert.ok(prefilled <= grown + 32, `prefilled ${prefilled} per turn for ${grown} new tokens`);
      assert.equal(fig(s.interrupt_reattached, 'reattached'), 1);
      assert.equal(fig(s.interrupt_prefill_recomputed, 'prefill recomputed'), 0);
      assert.equal(fig(s.interrupt_decode_recomputed, 'decode recomputed'), 0);
    } else {
      assert.equal(fig(s.interrupt_reattached, 'reattached'), 0, 'the peer has no session to re-attach');
      assert.equal(fig(s.interrupt_decode_recomputed, 'decode recomputed'), 2);
    }
  },
};

for (const [scenario, check] of Object.entries(checks)) {
  if (scenario === 'throughput_journal') continue;
  test(`bench ${scenario}: ${servers.join(' vs ')}, figures present and consistent`, async () => {
    const rec = await bench(scenario, {});
    common(rec, scenario, servers);
    for (const name of servers) check(rec.servers[name], true, name);
    if (scenario === 'throughput' && LLAMA) {
      // The engine alone on the same file, each run: llama-bench pp512 and tg128, and each
      // server's c1 decode rate (the median request's, first token to last) over tg128, beside
      // the older figure from the median ITL.
      const e = rec.engine;
      assert.ok(e && e.per_run.length === 1, 'llama-bench ran once per run');
      assert.ok(fig(e['llama-bench'].pp512_tokens_per_s, 'pp512') > 0);
      const tg = fig(e['llama-bench'].tg128_tokens_per_s, 'tg128');
      for (const name of servers) {
        const ratios = e[`${name}/llama-bench`];
        assert.ok(ratios, `${name}/llama-bench`);
        const decode = fig(rec.servers[name].decode_tokens_per_s_c1, 'decode_tokens_per_s_c1');
        const itl = fig(rec.servers[name].itl_p50_s_c1, 'itl_p50_s_c1');
        assert.ok(Math.abs(fig(ratios.decode_over_tg128, 'decode/tg128') - decode / tg) < 1e-6);
        assert.ok(Math.abs(fig(ratios.itl_p50_over_tg128, 'itl/tg128') - 1 / itl / tg) < 1e-6);
      }
    }
    if (scenario === 'throughput') {
      for (const name of servers) {
        checks.throughput_journal(rec.servers[name], name);
        // Every level runs C clients x --throughput-rounds (default 3) requests in turn.
        const samples = rec.per_run[0][name].samples;
        assert.equal(samples.ttft_s_c1.length, 3, `${name}: 1 client x 3 rounds`);
        assert.equal(samples.ttft_s_c3.length, 9, `${name}: 3 clients x 3 rounds`);
      }
    }
  });
}

// Issue #37: the kill through a guest (a routing-only head, two loopback guests; the guest
// running the stream SIGKILLed): the session moves to the other guest, nothing cut or repeated.
test('bench recovery --recovery-through-guest: the guest running the stream is killed, the stream completes', async () => {
  const rec = await bench('recovery', {}, ['--recovery-through-guest', '--kill-after', '16', '--stream-tokens', '64'], { peer: false, tag: '-guest' });
  const s = rec.servers.superfluid;
  checks.recovery(s);
  assert.ok(fig(s.recovery_s, 'recovery_s') > 0);
  assert.equal(fig(s.stream_cut, 'stream_cut'), 0, 'the stream moved, not cut');
  assert.equal(fig(s.tokens_duplicated, 'dup'), 0);
  assert.equal(fig(s.text_equals_journal, 'journal'), 1, 'the client received exactly the text the head journaled');
  assert.equal(fig(s.tokens_missing, 'missing'), 0);
  assert.equal(fig(s.tokens_before_kill, 'before'), 16);
  assert.match(rec.per_run[0].superfluid.samples.killed_node, /^guest-[ab]$/);
});

// The other APIs and the kills, at a smaller size still (1 trajectory of 3 calls, turn 2
// dropped): counts that must add up, the interruption's cost, no timing thresholds.
function enduranceSmall(s, name, { kill = false } = {}) {
  const calls = fig(s.calls, 'calls');
  assert.equal(calls, 3);
  assert.equal(fig(s.errors, 'errors'), 0);
  const valid = fig(s.schema_valid_calls, 'valid');
  const bad = fig(s.malformed_calls, 'malformed') + fig(s.truncated_calls, 'truncated');
  assert.equal(valid + bad, calls, `${name}: every call valid, malformed or truncated`);
  const before = fig(s.interrupt_tokens_before_cut, 'before cut');
  assert.equal(before, 2);
  const lost = fig(s.interrupt_tokens_lost, 'lost'), dup = fig(s.interrupt_tokens_duplicated, 'duplicated');
  assert.ok(lost >= 0 && dup >= 0 && lost + dup <= before, `${name}: lost ${lost} + duplicated ${dup} ≤ ${before}`);
  assert.equal(fig(s.interrupt_consistent, 'consistent'), lost === 0 ? 1 : 0);
  assert.equal(fig(s.interrupt_killed, 'killed'), kill ? 1 : 0);
  if (kill) {
    assert.equal(fig(s.interrupt_kill_ok, 'kill ok'), 1, `${name}: killed and serving again`);
    // One trajectory: no other turn for the kill to break.
    assert.equal(fig(s.broken_turns, 'broken turns'), 0);
  }
  assert.ok(fig(s.prefilled_tokens_per_turn, 'prefilled') > 0);
  if (name === 'superfluid') {
    // Every call holds to its schema; the dropped answer is re-attached from the journal (after
    // the kill too): nothing lost, duplicated or computed again by the client's doing.
    assert.equal(valid, calls, 'every call valid against its schema');
    assert.equal(fig(s.interrupt_reattached, 'reattached'), 1);
    assert.equal(lost + dup, 0);
    assert.equal(fig(s.interrupt_prefill_recomputed, 'prefill recomputed'), 0);
    assert.equal(fig(s.interrupt_decode_recomputed, 'decode recomputed'), 0);
    // After a kill, the restarted worker's own count of what it prefilled to resume.
    if (kill) assert.ok(fig(s.interrupt_server_prefilled, 'server prefilled') >= 0);
  } else {
    // Re-sent: the 2 tokens are generated again, kept (duplicated) or replaced (lost).
    assert.equal(fig(s.interrupt_reattached, 'reattached'), 0);
    assert.equal(fig(s.interrupt_decode_recomputed, 'decode recomputed'), 2);
    assert.equal(lost + dup, before);
    assert.ok(fig(s.interrupt_prefill_recomputed, 'prefill recomputed') >= 0);
  }
}

const SMALLER = ['--agents', '1', '--turns', '3', '--interrupt-at', '2', '--call-tokens', '160'];

test(`bench endurance --api anthropic --kill worker: ${servers.join(' vs ')}`, async () => {
  const rec = await bench('endurance', {}, [...SMALLER, '--api', 'anthropic', '--kill', 'worker'], { tag: '-anthropic' });
  common(rec, 'endurance', servers);
  assert.equal(rec.sizes.endurance_api, 'anthropic');
  for (const name of servers) enduranceSmall(rec.servers[name], name, { kill: true });
  // Anthropic usage: input_tokens + cache_read_input_tokens is the whole prompt, and it grows.
  const s = rec.servers.superfluid;
  assert.ok(fig(s.context_tokens_last, 'last') > fig(s.context_tokens_first, 'first'));
});

test('bench endurance --api responses --kill head: superfluid (the journal re-attached after a restart)', async () => {
  const rec = await bench('endurance', {}, [...SMALLER, '--api', 'responses', '--kill', 'head'], { peer: false, tag: '-responses' });
  common(rec, 'endurance', ['superfluid']);
  enduranceSmall(rec.servers.superfluid, 'superfluid', { kill: true });
});

test(`bench endurance --api ollama: ${servers.join(' vs ')} (llama-server: n/a)`, async () => {
  const rec = await bench('endurance', {}, [...SMALLER, '--api', 'ollama'], { tag: '-ollama' });
  common(rec, 'endurance', servers, { ratios: false });  // nothing to compare with n/a
  const s = rec.servers.superfluid;
  assert.equal(fig(s.api_served, 'api_served'), 1);
  enduranceSmall(s, 'superfluid');
  // Ollama reports prompt_eval_count (what was computed), no prompt total.
  assert.equal(s.context_tokens_first, null);
  if (LLAMA) {
    assert.equal(fig(rec.servers['llama-server'].api_served, 'peer api_served'), 0);
    assert.match(rec.per_run[0]['llama-server'].notes.join(' '), /n\/a/);
  }
});

// Cluster mode on loopback (issue #17): a plain serve vs a routing-only head and one guest, then
// two other guests and a SIGKILL of the busier one under 4 seeded streams. Consistency only.
test('bench cluster: local vs guest, bytes on the link, a guest killed mid-stream', async () => {
  const sizes = ['--cluster-tokens', '8', '--cluster-rounds', '1', '--cluster-streams', '4', '--stream-tokens', '128'];
  const rec = await bench('cluster', {}, sizes, { peer: false });
  common(rec, 'cluster', ['superfluid']);
  assert.equal(rec.settings.standby, 'off', 'the local side runs no standby, like the guests');
  const s = rec.servers.superfluid;
  for (const c of [1, 4]) {
    for (const side of ['local', 'guest']) {
      assert.ok(fig(s[side][`tokens_per_s_c${c}`], `${side} c${c}`) > 0);
      assert.ok(fig(s[side][`decode_tokens_per_s_c${c}`], `${side} decode c${c}`) > 0);
      assert.ok(fig(s[side][`ttft_p50_s_c${c}`], `${side} ttft c${c}`) > 0);
    }
    // The link's overhead: guest / local, figure by figure (one run: the medians' ratio).
    for (const [k, f] of [['rate', 'tokens_per_s'], ['decode_rate', 'decode_tokens_per_s'], ['first_token', 'ttft_p50_s']]) {
      const r = fig(s.guest_over_local[`${k}_c${c}`], `${k}_c${c}`);
      const g = fig(s.guest[`${f}_c${c}`], f), l = fig(s.local[`${f}_c${c}`], f);
      assert.ok(r > 0 && Math.abs(r - g / l) < 1e-6 * Math.max(1, r), `${k}_c${c} = guest / local`);
    }
  }
  assert.equal(fig(s.local.errors, 'local errors') + fig(s.guest.errors, 'guest errors'), 0);
  // Bytes between the head and guest-a's worker port (ss), per generated token.
  const w = s.wire;
  const from = fig(w.bytes_from_guest_per_token, 'from guest'), to = fig(w.bytes_to_guest_per_token, 'to guest');
  assert.ok(from > 0 && to > 0, 'bytes both ways');
  assert.ok(Math.abs(fig(w.bytes_per_token, 'bytes_per_token') - from - to) < 1e-6 * (from + to));
  assert.equal(fig(w.tokens, 'tokens'), 8 + 4 * 8, 'the levels\' tokens: c1 and c4, one 8-token answer per client');
  assert.ok(fig(w.idle_bytes_per_s, 'idle') >= 0);
  // The node loss: every stream complete, each journaled token delivered once, in order.
  const n = s.node_loss;
  assert.equal(fig(n.streams, 'streams'), 4);
  assert.equal(fig(n.streams_completed, 'completed'), 4);
  const moved = fig(n.streams_moved, 'moved');
  assert.ok(moved >= 1 && moved <= fig(n.sessions_on_killed_node, 'on killed node'), `${moved} streams moved`);
  assert.equal(fig(n.ids_missing, 'ids_missing'), 0);
  assert.equal(fig(n.ids_duplicated, 'ids_duplicated'), 0);
  assert.equal(fig(n.streams_equal_journal, 'equal journal'), 4);
  assert.ok(fig(n.tokens_before_kill, 'before kill') >= 8);
  const gap = fig(n.gap_s, 'gap_s'), loss = fig(n.loss_to_next_token_s, 'loss_to_next_token_s');
  assert.ok(gap > 0 && loss > 0 && gap <= fig(n.gap_max_s, 'gap max') && loss <= fig(n.loss_to_next_token_max_s, 'loss max'));
  const ref = fig(n.streams_equal_reference, 'equal reference');
  assert.ok(ref >= 0 && ref <= 4);
  console.log(`cluster: ${moved} streams moved, gap ${gap} s, ${ref} of 4 streams equal the local reference`);
  const run = rec.per_run[0].superfluid;
  assert.match(run.samples.killed_node, /^guest-[bc]$/);
  assert.equal(run.samples.moved.filter((m) => m === 1).length, moved);
  assert.equal(run.samples.gap_s.length, moved);
  for (const k of ['head', 'guest_join', 'guest_worker']) assert.ok(fig(s.cluster_peak_rss_mib[k], k) > 0);
});

test('bench --url measures a running server (no restart or kill)', async () => {
  const server = await startServer();
  try {
    const rec = await bench('burst', { url: server.url });
    assert.deepEqual(Object.keys(rec.servers), [server.url]);
    checks.burst(rec.servers[server.url]);
    const agentic = await bench('agentic', { url: server.url });
    checks.agentic(agentic.servers[server.url], false);
    assert.equal(agentic.servers[server.url].verdict_persistent, null);
  } finally {
    await server.stop();
  }
});
