// Reads a live SSE response frame by frame, as it arrives (tests that act mid-stream: kill a
// process, re-attach). A read error ends the stream quietly: the server may have been killed on
// purpose; callers check what they received.

/**
 * Yields { id, data, frame } per frame that has a `data:` line (`id` null without an `id:` line;
 * `frame` the frame's text as sent, blank line included). With `all`, frames without data
 * (comments, a bare `id:`) are yielded too, `data` null: the concatenation of every `frame` is
 * the stream's text up to there.
 */
export async function* sseFrames(res, { all = false } = {}) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch {
      return; // the server died
    }
    if (chunk.done) return;
    buf += dec.decode(chunk.value, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, nl + 2);
      buf = buf.slice(nl + 2);
      let id = null;
      let data = null;
      for (const line of frame.slice(0, -2).split('\n')) {
        if (line.startsWith('id: ')) id = line.slice(4);
        if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (data !== null || all) yield { id, data, frame };
    }
  }
}

/**
 * Streams an OpenAI chat completion (`body` with stream: true) from `server` to its end.
 * Resolves { status, session (its X-Superfluid-Session), text (reasoning and content), model
 * (the first chunk's), done ([DONE] came), error (an in-band error object or null), at
 * (Date.now() at the end) }; `onToken(text)` after each piece of text. A stream cut (the server
 * killed) resolves with done false. `path`: another endpoint that streams chat chunks (GET
 * /v1/sessions/ID/events: `body` null).
 */
export async function chatStream(server, body, onToken = () => {}, path = '/v1/chat/completions') {
  const res = await fetch(`${server.url}${path}`, body === null ? {} : {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const session = res.headers.get('x-superfluid-session');
  let text = '';
  let model = null;
  let done = false;
  let error = null;
  if (res.status !== 200) return { status: res.status, session, text, model, done, error: await res.text(), at: Date.now() };
  for await (const { data } of sseFrames(res)) {
    if (data === '[DONE]') {
      done = true;
      continue;
    }
    const j = JSON.parse(data);
    if (j.error) error = j.error;
    model ??= j.model ?? null;
    const d = j.choices?.[0]?.delta ?? {};
    const piece = (d.reasoning_content ?? '') + (d.content ?? '');
    if (piece) {
      text += piece;
      onToken(text);
    }
  }
  return { status: res.status, session, text, model, done, error, at: Date.now() };
}
