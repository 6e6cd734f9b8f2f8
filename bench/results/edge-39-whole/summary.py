import json, glob, statistics, os
D = os.environ.get('D', os.path.dirname(os.path.abspath(__file__)))
def load(p):
    return json.load(open(p + '/results.json'))
rows = {}
for kind, keys in [('prio', ['agents_tokens_per_s', 'chat_ttft_s', 'chat_ttft_idle_s']), ('tp', None)]:
    for v in ['old', 'new']:
        for p in sorted(glob.glob(f'{D}/{kind}-{v}-*')):
            j = load(p)
            pr = j['per_run'][0]
            sf = pr['superfluid']['figures']
            r = j['ratios']['superfluid/llama-server']
            if kind == 'prio':
                rows.setdefault(('prio agents ratio', v), []).append(r['agents_tokens_per_s']['median'])
                rows.setdefault(('prio chat ttft under load s', v), []).append(sf['chat_ttft_s'])
                rows.setdefault(('prio chat ttft idle s', v), []).append(sf['chat_ttft_idle_s'])
                rows.setdefault(('prio llama-server chat ttft s', v), []).append(pr['llama-server']['figures']['chat_ttft_s'])
            else:
                for k, x in r.items():
                    if 'tokens_per_s' in k:
                        rows.setdefault((f'tp ratio {k}', v), []).append(x['median'])
                for k, x in sf.items():
                    if 'tokens_per_s' in k or 'itl' in k:
                        if isinstance(x, (int, float)):
                            rows.setdefault((f'tp ours {k}', v), []).append(x)
names = sorted(set(k for k, _ in rows))
for n in names:
    o = rows.get((n, 'old'), []); w = rows.get((n, 'new'), [])
    f = lambda a: ', '.join(f'{x:.4g}' for x in a)
    m = lambda a: f'{statistics.median(a):.4g}' if a else '-'
    print(f'| {n} | {f(o)} | {f(w)} | {m(o)} / {m(w)} |')
