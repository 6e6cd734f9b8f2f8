// Reads an NDJSON (Ollama) response byte-exactly: every line must be valid UTF-8 (a fatal
// decoder throws on a split or invalid code point) and valid JSON.
export async function readNdjson(res) {
  const bytes = Buffer.from(await res.arrayBuffer());
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const lines = [];
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i === bytes.length || bytes[i] === 0x0a) {
      if (i > start) {
        const text = decoder.decode(bytes.subarray(start, i)); // throws on invalid UTF-8
        lines.push(JSON.parse(text));
      }
      start = i + 1;
    }
  }
  return lines;
}

/** POSTs JSON to `url + path` and returns the fetch Response. */
export function postJson(url, path, body, init = {}) {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...init,
  });
}

/**
 * The answer's own tokens in an Ollama final line: eval_count less the end-of-generation token
 * it counts (as Ollama's does) when the model ended the answer (done_reason "stop"; the tests
 * that use it set no stop strings).
 */
export const answerTokens = (last) => last.eval_count - (last.done_reason === 'stop' ? 1 : 0);
