// Network namespaces for cluster tests (issue #17): a bridge in the test's own namespace, one
// namespace per guest joined to it by a veth pair, all on a random 10.x.y.0/24 so parallel
// test runs do not collide. Needs root and `ip` (iproute2); canMakeNamespaces() says whether
// they can be made here (the caller prints SKIP and counts it when not). Everything made is
// removed by teardown(), including after a failed test.
import { execFileSync } from 'node:child_process';

const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** True when nftables' `nft` runs (half-open links need it). */
export function hasNft() {
  try {
    execFileSync('nft', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** True when `tcpdump` runs (the capture tests need it). */
export function hasTcpdump() {
  try {
    execFileSync('tcpdump', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** True when this process may create namespaces, bridges and veth pairs. */
export function canMakeNamespaces() {
  if (process.getuid?.() !== 0) return false;
  const probe = `sfp${process.pid % 100000}`;
  try {
    ip('netns', 'add', probe);
    ip('netns', 'del', probe);
    ip('link', 'add', `${probe}b`, 'type', 'bridge');
    ip('link', 'del', `${probe}b`);
    return true;
  } catch {
    return false;
  }
}

/**
 * A bridge with address .1 in this namespace (the head listens there) and `n` guest
 * namespaces with addresses .11, .12, …. Returns { hostIp, guests: [{ ns, ip, veth }],
 * exec(ns, cmd, args) → spawn args, linkDown(i), linkUp(i), dropToHead(i), healToHead(i),
 * bridge, lossy(i, percent), lossCounts(i), clearLoss(i), teardown() }.
 */
export function makeNetwork(n) {
  const tag = `${process.pid % 10000}${Math.floor(Math.random() * 90 + 10)}`;
  const net = `10.${200 + Math.floor(Math.random() * 50)}.${Math.floor(Math.random() * 250)}`;
  const bridge = `sfb${tag}`;
  const made = { links: [], netns: [] };
  const teardown = () => {
    for (const ns of made.netns) {
      try {
        ip('netns', 'del', ns);
      } catch {}
    }
    for (const l of made.links) {
      try {
        ip('link', 'del', l);
      } catch {}
    }
  };
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    made.links.push(bridge);
    ip('addr', 'add', `${net}.1/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    const guests = [];
    for (let i = 0; i < n; i++) {
      const ns = `sfg${tag}-${i}`;
      const host = `sfv${tag}${i}`;
      ip('netns', 'add', ns);
      made.netns.push(ns);
      ip('link', 'add', host, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
      made.links.push(host);
      ip('link', 'set', host, 'master', bridge);
      ip('link', 'set', host, 'up');
      ip('-n', ns, 'addr', 'add', `${net}.${11 + i}/24`, 'dev', 'eth0');
      ip('-n', ns, 'link', 'set', 'eth0', 'up');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      guests.push({ ns, ip: `${net}.${11 + i}`, veth: host });
    }
    return {
      hostIp: `${net}.1`,
      guests,
      /** [command, args] that run `cmd args` inside namespace `ns`. */
      exec: (ns, cmd, args) => ['ip', ['netns', 'exec', ns, cmd, ...args]],
      linkDown: (i) => ip('link', 'set', guests[i].veth, 'down'),
      /** Half-open: guest i's packets to the head are dropped (nftables in its namespace). */
      dropToHead: (i) => {
        const nft = (...a) => execFileSync('ip', ['netns', 'exec', guests[i].ns, 'nft', ...a]);
        nft('add', 'table', 'inet', 'sfho');
        nft('add', 'chain', 'inet', 'sfho', 'out', '{ type filter hook output priority 0 ; }');
        nft('add', 'rule', 'inet', 'sfho', 'out', 'ip', 'daddr', `${net}.1`, 'drop');
      },
      healToHead: (i) => execFileSync('ip', ['netns', 'exec', guests[i].ns, 'nft', 'delete', 'table', 'inet', 'sfho']),
      linkUp: (i) => ip('link', 'set', guests[i].veth, 'up'),
      /** The bridge's name (a capture on it sees every packet between the head and the guests). */
      bridge,
      /**
       * A lossy link: nftables in guest i's namespace drops `percent` % of the packets its eth0
       * receives and `percent` % of those it sends (`numgen random`, as netem is not here).
       */
      lossy: (i, percent) => {
        const nft = (...a) => execFileSync('ip', ['netns', 'exec', guests[i].ns, 'nft', ...a]);
        nft('add', 'table', 'inet', 'sfloss');
        nft('add', 'chain', 'inet', 'sfloss', 'in', '{ type filter hook input priority 0 ; }');
        nft('add', 'chain', 'inet', 'sfloss', 'out', '{ type filter hook output priority 0 ; }');
        for (const [chain, dir] of [['in', 'iifname'], ['out', 'oifname']]) {
          nft('add', 'rule', 'inet', 'sfloss', chain, dir, 'eth0', 'counter'); // every packet
          nft('add', 'rule', 'inet', 'sfloss', chain, dir, 'eth0', 'numgen', 'random', 'mod', '100', '<', String(percent), 'counter', 'drop');
        }
      },
      /** While lossy(i): { seen, dropped } packets on guest i's eth0 so far (both directions). */
      lossCounts: (i) => {
        const text = execFileSync('ip', ['netns', 'exec', guests[i].ns, 'nft', 'list', 'table', 'inet', 'sfloss']).toString();
        const c = { seen: 0, dropped: 0 };
        for (const m of text.matchAll(/counter packets (\d+) bytes \d+( drop)?/g)) c[m[2] ? 'dropped' : 'seen'] += Number(m[1]);
        return c;
      },
      /** Ends lossy(i): guest i's link delivers every packet again. */
      clearLoss: (i) => execFileSync('ip', ['netns', 'exec', guests[i].ns, 'nft', 'delete', 'table', 'inet', 'sfloss']),
      teardown,
    };
  } catch (e) {
    teardown();
    throw e;
  }
}
