// A stand-in for the Hugging Face hub on loopback (issue #8 tests): the three endpoints a pull
// uses, with the hub's shapes —
//   GET /api/models/{org}/{repo}/revision/{rev}   → {id, sha, siblings}
//   GET /api/models/{org}/{repo}/tree/{rev}       → [{type, path, size, oid, lfs: {oid, size}}]
//   GET /{org}/{repo}/resolve/{rev}/{path}        → bytes, Range honoured (206), ETag = sha256
// Unknown repositories get 401 + X-Error-Code: RepoNotFound (what the real hub answers without
// a token), unknown revisions 404 + RevisionNotFound. Per file it can misbehave once or always:
// end the connection after N bytes (killAfter), stop sending after N bytes (stallAfter),
// send corrupted bytes (corrupt) or send slowly (throttle). It counts the bytes it served.
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';

const sha256 = (b) => createHash('sha256').update(b).digest('hex');
const gitOid = (b) => createHash('sha1').update(Buffer.concat([Buffer.from(`blob ${b.length}\0`), b])).digest('hex');

export async function startHub() {
  const repos = new Map(); // "org/repo" → { refs: Map(rev → commit), commits: Map(commit → Map(path → file)) }
  const served = new Map(); // path → bytes written
  const requests = []; // { method, url, range, authorization }
  const behaviours = new Map(); // path → { killAfter, stallAfter, corrupt, throttle, times }
  const sockets = new Set();
  const listings = new Map(); // "org/repo" → { extra: [listing entries], link: Link header value }

  function findFiles(repo, rev) {
    const r = repos.get(repo);
    if (!r) return { error: [401, 'RepoNotFound', 'Repository not found'] };
    const commit = r.refs.get(rev) ?? (r.commits.has(rev) ? rev : null);
    if (!commit) return { error: [404, 'RevisionNotFound', 'Invalid rev id: ' + rev] };
    return { commit, files: r.commits.get(commit) };
  }

  function fail(res, [status, code, message]) {
    res.writeHead(status, { 'content-type': 'application/json', 'x-error-code': code });
    res.end(JSON.stringify({ error: message }));
  }

  function serveFile(req, res, file, commit) {
    const b = behaviours.get(file.path) || {};
    let body = file.bytes;
    if (b.corrupt) {
      body = Buffer.from(body);
      body[body.length >> 1] ^= 0xff;
    }
    let start = 0;
    const m = /^bytes=(\d+)-$/.exec(req.headers.range || '');
    if (m) start = Number(m[1]);
    if (start > body.length) {
      res.writeHead(416, { 'content-range': `bytes */${body.length}` });
      return res.end();
    }
    const headers = {
      'content-type': 'application/octet-stream',
      'accept-ranges': 'bytes',
      etag: `"${file.sha256}"`,
      'x-repo-commit': commit,
      'content-length': String(body.length - start),
    };
    if (m) headers['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
    res.writeHead(m ? 206 : 200, headers);
    if (req.method === 'HEAD') return res.end();
    const misbehave = b.times === undefined || b.times > 0;
    if (misbehave && b.times !== undefined && (b.killAfter !== undefined || b.stallAfter !== undefined)) b.times--;
    let pos = start;
    const count = (n) => served.set(file.path, (served.get(file.path) || 0) + n);
    const chunk = b.throttle || 64 * 1024;
    const step = () => {
      if (res.destroyed) return;
      if (pos >= body.length) return res.end();
      let end = Math.min(body.length, pos + chunk);
      if (misbehave && b.killAfter !== undefined && end >= b.killAfter && pos < b.killAfter) end = b.killAfter;
      if (misbehave && b.stallAfter !== undefined && pos >= b.stallAfter) return; // never sends more
      if (misbehave && b.stallAfter !== undefined && end > b.stallAfter) end = b.stallAfter;
      const part = body.subarray(pos, end);
      pos = end;
      count(part.length);
      res.write(part, () => {
        if (misbehave && b.killAfter !== undefined && pos === b.killAfter) return res.socket?.end(); // FIN after the bytes: the client sees a short body
        if (b.throttle) setTimeout(step, 50);
        else setImmediate(step);
      });
    };
    step();
  }

  const server = createServer((req, res) => {
    requests.push({ method: req.method, url: req.url, range: req.headers.range, authorization: req.headers.authorization });
    const url = new URL(req.url, 'http://hub');
    const path = decodeURIComponent(url.pathname);
    let m = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/(.+)$/.exec(path);
    if (m) {
      const r = findFiles(m[1], m[2]);
      if (r.error) return fail(res, r.error);
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ id: m[1], sha: r.commit, siblings: [...r.files.keys()].map((rfilename) => ({ rfilename })) }));
    }
    m = /^\/api\/models\/([^/]+\/[^/]+)\/tree\/([^/]+)$/.exec(path);
    if (m) {
      const r = findFiles(m[1], m[2]);
      if (r.error) return fail(res, r.error);
      const odd = listings.get(m[1]) || {};
      res.writeHead(200, { 'content-type': 'application/json', ...(odd.link ? { link: odd.link } : {}) });
      return res.end(JSON.stringify([...r.files.values()].map((f) => ({
        type: 'file', oid: f.gitOid, size: f.bytes.length, path: f.path,
        ...(f.lfs ? { lfs: { oid: f.sha256, size: f.bytes.length, pointerSize: 134 } } : {}),
      })).concat(odd.extra || [])));
    }
    m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    if (m) {
      const r = findFiles(m[1], m[2]);
      if (r.error) return fail(res, r.error);
      const file = r.files.get(m[3]);
      if (!file) return fail(res, [404, 'EntryNotFound', 'Entry not found']);
      return serveFile(req, res, file, r.commit);
    }
    fail(res, [404, 'NotFound', 'unknown endpoint ' + path]);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;

  let commits = 0;
  return {
    url,
    requests,
    /**
     * Adds (or replaces) repo at branch `rev` with files { path: Buffer } (all LFS unless the
     * path is in `plain`). Returns the commit id.
     */
    addRepo(repo, files, { rev = 'main', plain = [] } = {}) {
      const commit = createHash('sha1').update(`${repo}@${rev}#${++commits}`).digest('hex');
      const map = new Map();
      for (const [path, bytes] of Object.entries(files))
        map.set(path, { path, bytes, sha256: sha256(bytes), gitOid: gitOid(bytes), lfs: !plain.includes(path) });
      const r = repos.get(repo) || { refs: new Map(), commits: new Map() };
      r.refs.set(rev, commit);
      r.commits.set(commit, map);
      repos.set(repo, r);
      return commit;
    },
    /**
     * A hostile listing for `repo`: `extra` entries appended to its tree listing as they are,
     * and `link` sent as the listing's Link header (null: back to normal).
     */
    hostileListing(repo, odd) {
      if (odd) listings.set(repo, odd);
      else listings.delete(repo);
    },
    /** Misbehaviour for one file path: { killAfter, stallAfter, corrupt, throttle, times }. */
    behave(path, b) {
      behaviours.set(path, { ...b });
    },
    /** Bytes of `path` written so far. */
    served(path) {
      return served.get(path) || 0;
    },
    resetCounts() {
      served.clear();
      requests.length = 0;
    },
    sha256,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
