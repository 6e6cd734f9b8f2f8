// The Kubernetes manifests (deploy/kubernetes, issue #17) kept in step with the CLI: every
// `superfluid` invocation in a container's command/args names a subcommand that exists and
// only flags its `--help` lists (values of flags with a fixed set of choices among them); the
// ports that containers and Services declare for the API, the guest port and a guest's worker
// port are the ones the CLI uses (its --help defaults, or the flag's value in the args); the
// join target names a Service that reaches the head's guest port; every Secret / ConfigMap key
// and every $(VAR) the containers use is defined; NetworkPolicy ports name declared ports;
// kustomization.yaml lists files that exist. Runs only `superfluid … --help`: no cluster needed.
//
// The manifests are read with the `yaml` package (tests/clients/package.json); without it
// every test fails and says to run scripts/setup.sh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, dirname, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { SUPERFLUID } from '../lib/server.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DIR = join(ROOT, 'deploy', 'kubernetes');
const REL = 'deploy/kubernetes';

// ---- reading the manifests -----------------------------------------------------------------

// The `yaml` package (eemeli/yaml) from tests/clients, which scripts/setup.sh installs.
let YAML = null;
let yamlMissing = null;
try {
  YAML = createRequire(join(ROOT, 'tests', 'clients', 'package.json'))('yaml');
} catch (e) {
  yamlMissing = new Error('run scripts/setup.sh: the yaml package is missing in tests/clients', { cause: e });
}

/** The documents of `text` as plain values (file name `file` for messages). */
function readYaml(text, file) {
  return YAML.parseAllDocuments(text, { prettyErrors: true }).map((d) => {
    if (d.errors.length) throw new Error(`${file}: ${d.errors[0].message}`);
    return d.toJS();
  });
}

// ---- the CLI's --help -----------------------------------------------------------------------

const helps = new Map();
/** `superfluid PATH… --help` as { subcommands, options: Map(name → option), positionals }. */
function help(path) {
  const key = path.join(' ');
  if (helps.has(key)) return helps.get(key);
  let text;
  try {
    text = execFileSync(SUPERFLUID, [...path, '--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    text = null;
  }
  const h = text && parseHelp(text);
  helps.set(key, h);
  return h;
}

function parseHelp(text) {
  const h = { subcommands: new Set(), options: new Map(), positionals: [] };
  let section = null;
  for (const line of text.split('\n')) {
    const head = /^(\w+):$/.exec(line);
    if (head) {
      section = head[1];
      continue;
    }
    // An entry starts two spaces in; its description follows after two or more spaces.
    const m = /^ {2}(\S.*?)(?: {2,}.*)?$/.exec(line);
    if (!m) continue;
    const spec = m[1];
    if (section === 'Subcommands') h.subcommands.add(spec.split(' ')[0]);
    if (section === 'Positionals')
      h.positionals.push({ name: spec.split(' ')[0], required: /\bREQUIRED\b/.test(spec) });
    if (section !== 'Options' || !spec.startsWith('-')) continue;
    const [names, ...rest] = spec.split(' ');
    const type = rest.join(' ');
    const opt = {
      names: names.replace(/\{[^}]*\}$/, '').split(','),
      takesValue: type !== '',
      default: /=([^\s=]+)$/.exec(type)?.[1],
      choices: /:\{([^}]*)\}/.exec(type)?.[1].split(','),
    };
    for (const n of opt.names) h.options.set(n, opt);
  }
  return h;
}

/** Splits a superfluid argv into its subcommand path, flags ({name, value}) and positionals. */
function parseInvocation(argv) {
  const problems = [];
  const path = [];
  let h = help([]);
  let i = 0;
  // Down the subcommands while the next word is one (`token create`); a flag or a positional
  // after a command that has both (`nodes --port 8453`, `nodes revoke NAME`) ends the path.
  while (i < argv.length && h && h.subcommands.size && !argv[i].startsWith('-')) {
    if (!h.subcommands.has(argv[i])) {
      if (path.length && h.positionals.length) break;  // a positional of this command
      problems.push(`\`superfluid ${[...path, argv[i]].join(' ')}\`: no such subcommand (\`${['superfluid', ...path, '--help'].join(' ')}\` lists ${[...h.subcommands].join(', ')})`);
      return { path, flags: [], positionals: [], problems };
    }
    path.push(argv[i++]);
    h = help(path);
  }
  if (!path.length || !h) {
    problems.push(path.length ? `\`superfluid ${path.join(' ')} --help\` failed` : 'no subcommand');
    return { path, flags: [], positionals: [], problems };
  }
  const flags = [];
  const positionals = [];
  const cmd = `superfluid ${path.join(' ')}`;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('-')) {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    const opt = h.options.get(name);
    if (!opt) {
      problems.push(`\`${cmd}\` has no flag ${name} (not in \`${cmd} --help\`)`);
      continue;
    }
    let value = eq > 0 && a.startsWith('--') ? a.slice(eq + 1) : undefined;
    if (opt.takesValue && value === undefined) {
      if (i + 1 >= argv.length) problems.push(`\`${cmd}\`: ${name} needs a value`);
      else value = argv[++i];
    }
    if (opt.choices && value !== undefined && !/^\$\(\w+\)$/.test(value) && !opt.choices.includes(value))
      problems.push(`\`${cmd}\`: ${name} ${value} is not one of ${opt.choices.join(', ')}`);
    flags.push({ name, opt, value });
  }
  if (positionals.length > h.positionals.length)
    problems.push(`\`${cmd}\` takes ${h.positionals.length} positional argument(s), given ${positionals.join(' ')}`);
  h.positionals.forEach((p, k) => {
    if (p.required && k >= positionals.length) problems.push(`\`${cmd}\` needs its argument ${p.name}`);
  });
  return { path, flags, positionals, problems };
}

/** The port a flag sets: its value in the args, else the default `--help` prints. */
function portOf(inv, flag) {
  const given = inv.flags.find((f) => f.opt.names.includes(flag));
  const text = given ? given.value : help(inv.path)?.options.get(flag)?.default;
  return /^\d+$/.test(text ?? '') ? Number(text) : undefined;
}

// ---- the manifests --------------------------------------------------------------------------

function load() {
  const files = readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f)).sort();
  const docs = [];
  for (const f of files)
    for (const doc of readYaml(readFileSync(join(DIR, f), 'utf8'), `${REL}/${f}`))
      if (doc) docs.push({ file: `${REL}/${f}`, doc });
  return { files, docs };
}

const WORKLOADS = ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'Pod'];

/** Every container of every workload: { file, where, pod (template), c }. */
function containers(docs) {
  const out = [];
  for (const { file, doc } of docs) {
    if (!WORKLOADS.includes(doc.kind)) continue;
    const tpl = doc.kind === 'Pod' ? doc : doc.spec?.template;
    const spec = tpl?.spec ?? {};
    for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])])
      out.push({ file, where: `${doc.kind}/${doc.metadata?.name} container "${c.name}"`, pod: tpl, c });
  }
  return out;
}

/** The container's superfluid argv (after the executable), or null when it runs something else. */
function superfluidArgv({ c }) {
  const argv = [...(c.command ?? []), ...(c.args ?? [])];
  if (!argv.length || basename(String(argv[0])) !== 'superfluid') return null;
  return argv.slice(1).map(String);
}

// A missing yaml package, or a manifest it cannot read, fails every test with the reason.
let loaded = { files: [], docs: [] };
let loadError = yamlMissing;
if (!loadError)
  try {
    loaded = load();
  } catch (e) {
    loadError = e;
  }
const { files, docs } = loaded;
const cliHelp = help([]);
const all = loadError || !cliHelp ? [] : containers(docs);
const invocations = all
  .map((x) => ({ ...x, argv: superfluidArgv(x) }))
  .filter((x) => x.argv)
  .map((x) => ({ ...x, inv: parseInvocation(x.argv) }));
const report = (problems) => {
  if (loadError) throw loadError;
  assert.ok(cliHelp, `\`${SUPERFLUID} --help\` failed: set SUPERFLUID_BIN to the built binary`);
  assert.ok(problems.length === 0, `\n  ${problems.join('\n  ')}`);
};
const selects = (selector, labels) =>
  selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);
const podsOf = (selector) => all.filter((x) => selects(selector, x.pod?.metadata?.labels));

test('deploy/kubernetes: the manifests parse and run a cluster head and guests', () => {
  report([]);
  assert.ok(files.length > 0, `no YAML files in ${REL}`);
  const runs = invocations.map((x) => x.inv.path.join(' '));
  assert.ok(runs.includes('serve'), `no container in ${REL} runs \`superfluid serve\``);
  assert.ok(runs.includes('join'), `no container in ${REL} runs \`superfluid join\``);
  // A container whose image is superfluid but whose command is not: its flags go unchecked.
  const unchecked = all.filter((x) => /superfluid/.test(x.c.image ?? '') && !superfluidArgv(x));
  report(unchecked.map((x) => `${x.file}: ${x.where}: command is not \`superfluid …\`, so it cannot be checked`));
});

test('deploy/kubernetes: every superfluid subcommand and flag exists in the CLI', () => {
  report(invocations.flatMap((x) => x.inv.problems.map((p) => `${x.file}: ${x.where}: ${p}`)));
});

test('deploy/kubernetes: container ports are the ports the CLI listens on', () => {
  const problems = [];
  const expect = (x, portName, flag) => {
    const want = portOf(x.inv, flag);
    const p = (x.c.ports ?? []).find((q) => q.name === portName);
    if (want === undefined) problems.push(`${x.file}: ${x.where}: cannot read the default of ${flag} from \`superfluid ${x.inv.path.join(' ')} --help\``);
    else if (!p) problems.push(`${x.file}: ${x.where}: no containerPort named "${portName}" (${flag}: ${want})`);
    else if (p.containerPort !== want)
      problems.push(`${x.file}: ${x.where}: containerPort "${portName}" is ${p.containerPort}, but ${flag} is ${want}`);
  };
  for (const x of invocations) {
    const cmd = x.inv.path.join(' ');
    const has = (f) => x.inv.flags.some((g) => g.name === f);
    if (cmd === 'serve') expect(x, 'api', '--port');
    if (cmd === 'serve' && has('--cluster')) expect(x, 'guest', '--guest-port');
    if (cmd === 'join') expect(x, 'worker', '--worker-port');
  }
  report(problems);
});

test('deploy/kubernetes: Services and NetworkPolicies reach declared ports with the same numbers', () => {
  const problems = [];
  const resolve = (pods, ref) =>
    pods.flatMap((x) => (x.c.ports ?? []).filter((p) => (typeof ref === 'number' ? p.containerPort === ref : p.name === ref)));
  for (const { file, doc } of docs) {
    if (doc.kind === 'Service') {
      const pods = podsOf(doc.spec?.selector);
      const where = `${file}: Service/${doc.metadata?.name}`;
      if (!pods.length) problems.push(`${where}: its selector matches no pod template`);
      for (const sp of doc.spec?.ports ?? []) {
        const target = sp.targetPort ?? sp.port;
        const found = resolve(pods, target);
        if (pods.length && !found.length) problems.push(`${where}: port ${sp.name ?? sp.port}: targetPort ${target} is no containerPort of the pods it selects`);
        for (const p of found)
          if (p.containerPort !== sp.port)
            problems.push(`${where}: port ${sp.name ?? ''} is ${sp.port} but its container listens on ${p.containerPort}`);
      }
    }
    if (doc.kind === 'NetworkPolicy') {
      const pods = podsOf(doc.spec?.podSelector?.matchLabels);
      const where = `${file}: NetworkPolicy/${doc.metadata?.name}`;
      if (!pods.length) problems.push(`${where}: its podSelector matches no pod template`);
      for (const rule of doc.spec?.ingress ?? [])
        for (const p of rule.ports ?? [])
          if (pods.length && p.port !== undefined && !resolve(pods, p.port).length)
            problems.push(`${where}: port ${p.port} is no containerPort of the pods it selects`);
    }
  }
  // The head's API and guest ports are each behind a Service.
  for (const x of invocations.filter((y) => y.inv.path[0] === 'serve'))
    for (const name of x.inv.flags.some((f) => f.name === '--cluster') ? ['api', 'guest'] : ['api']) {
      const exposed = docs.some(
        ({ doc }) =>
          doc.kind === 'Service' &&
          selects(doc.spec?.selector, x.pod?.metadata?.labels) &&
          (doc.spec?.ports ?? []).some((sp) => {
            const t = sp.targetPort ?? sp.port;
            return (x.c.ports ?? []).some((p) => p.name === name && (t === name || t === p.containerPort));
          }),
      );
      if (!exposed) problems.push(`${x.file}: ${x.where}: no Service exposes its "${name}" port`);
    }
  // The head a guest joins: HOST:PORT, HOST a Service of these manifests that reaches the
  // guest port of a `serve --cluster` container, PORT that Service's port.
  for (const x of invocations.filter((y) => y.inv.path[0] === 'join')) {
    const target = x.inv.positionals[0] ?? '';
    const m = /^([^:]+):(\d+)$/.exec(target);
    const where = `${x.file}: ${x.where}: join ${target}`;
    if (!m) {
      problems.push(`${where}: expected HOST:PORT`);
      continue;
    }
    const svc = docs.find((d) => d.doc.kind === 'Service' && d.doc.metadata?.name === m[1].split('.')[0]);
    if (!svc) {
      problems.push(`${where}: no Service named ${m[1].split('.')[0]} in ${REL}`);
      continue;
    }
    const sp = (svc.doc.spec?.ports ?? []).find((p) => p.port === Number(m[2]));
    const heads = podsOf(svc.doc.spec?.selector).filter((h) => {
      const inv = invocations.find((i) => i.c === h.c)?.inv;
      return inv && inv.path[0] === 'serve' && inv.flags.some((f) => f.name === '--cluster');
    });
    const headPort = heads.length ? portOf(invocations.find((i) => i.c === heads[0].c).inv, '--guest-port') : undefined;
    if (!heads.length) problems.push(`${where}: Service ${m[1]} selects no \`superfluid serve --cluster\` container`);
    else if (!sp) problems.push(`${where}: Service ${m[1]} has no port ${m[2]}`);
    else if (Number(m[2]) !== headPort) problems.push(`${where}: the head's guest port is ${headPort}, not ${m[2]}`);
  }
  report(problems);
});

test('deploy/kubernetes: every Secret and ConfigMap key and every $(VAR) the containers use is defined', () => {
  const problems = [];
  const find = (kind, name) => docs.find((d) => d.doc.kind === kind && d.doc.metadata?.name === name);
  for (const x of all) {
    const env = x.c.env ?? [];
    for (const e of env) {
      for (const [kind, ref] of [['Secret', e.valueFrom?.secretKeyRef], ['ConfigMap', e.valueFrom?.configMapKeyRef]]) {
        if (!ref) continue;
        const d = find(kind, ref.name);
        const keys = d ? Object.keys({ ...(d.doc.data ?? {}), ...(d.doc.stringData ?? {}) }) : [];
        if (!d) problems.push(`${x.file}: ${x.where}: env ${e.name} reads ${kind} ${ref.name}, which no file in ${REL} defines`);
        else if (!keys.includes(ref.key))
          problems.push(`${x.file}: ${x.where}: env ${e.name} reads key "${ref.key}" of ${kind} ${ref.name} (${d.file}), which has only ${keys.join(', ') || 'no keys'}`);
      }
    }
    // Kubernetes leaves an undefined $(VAR) in the args as it is: it would reach the CLI verbatim.
    const names = new Set(env.map((e) => e.name));
    for (const a of [...(x.c.command ?? []), ...(x.c.args ?? [])])
      for (const [, v] of String(a).matchAll(/\$\((\w+)\)/g))
        if (!names.has(v)) problems.push(`${x.file}: ${x.where}: $(${v}) in its command/args is no env var of the container`);
  }
  report(problems);
});

// Issue #38 item 7: a Secret expanded into the args ($(VAR)) is in the process's command line,
// which every user of the node can read (ps, /proc/PID/cmdline); serve and join read their key
// and token from the environment (SUPERFLUID_API_KEY, SUPERFLUID_JOIN_TOKEN) or a file instead.
test('deploy/kubernetes: no Secret reaches a command line; the key and the token come from the environment', () => {
  const problems = [];
  for (const x of all) {
    const secret = new Set((x.c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name));
    for (const a of [...(x.c.command ?? []), ...(x.c.args ?? [])])
      for (const [, v] of String(a).matchAll(/\$\((\w+)\)/g))
        if (secret.has(v)) problems.push(`${x.file}: ${x.where}: the Secret in $(${v}) is passed as an argument`);
  }
  report(problems);
  const envOf = (cmd) => invocations.filter((x) => x.inv.path[0] === cmd).flatMap((x) => (x.c.env ?? []).map((e) => e.name));
  assert.ok(envOf('serve').includes('SUPERFLUID_API_KEY'), 'the head gets its API key from SUPERFLUID_API_KEY');
  assert.ok(envOf('join').includes('SUPERFLUID_JOIN_TOKEN'), 'the guests get the join token from SUPERFLUID_JOIN_TOKEN');
});

test('deploy/kubernetes: kustomization.yaml lists files that exist', () => {
  report([]);
  const k = docs.find((d) => d.doc.kind === 'Kustomization');
  assert.ok(k, `no kustomization.yaml in ${REL}`);
  report((k.doc.resources ?? []).filter((r) => !existsSync(join(DIR, r))).map((r) => `${k.file}: resource ${r} does not exist`));
});
