// Reads a live SSE response frame by frame, as it arrives (tests that act mid-stream: kill a
// process, re-attach). A read error ends the stream quietly: the server may have been killed on
// purpose; callers check what they received.

/** Yields { id, data } per frame that has a `data:` line (`id` null without an `id:` line). */
export async function* sseFrames(res) {
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
      const frame = buf.slice(0, nl);
      buf = buf.slice(nl + 2);
      let id = null;
      let data = null;
      for (const line of frame.split('\n')) {
        if (line.startsWith('id: ')) id = line.slice(4);
        if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (data !== null) yield { id, data };
    }
  }
}
