// Reads one HTTP/1.1 response off the front of what a socket has received, for the load generator
// (./load.ts): its status, its body (sized by Content-Length, or chunked), and whether the server
// closes the connection after it. Answers undefined while the response is incomplete.

export interface Response {
  status: number;
  body: string;
  /** The server said `Connection: close`: the next request needs a new connection. */
  close: boolean;
}

const CRLF = Buffer.from('\r\n');
const END_OF_HEAD = Buffer.from('\r\n\r\n');

export function parseResponse(buf: Buffer): { response: Response; length: number } | undefined {
  const headEnd = buf.indexOf(END_OF_HEAD);
  if (headEnd < 0) return undefined;
  const head = buf.toString('latin1', 0, headEnd);
  const status = Number(head.slice(9, 12));
  let contentLength: number | undefined;
  let chunked = false;
  let close = false;
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line
      .slice(colon + 1)
      .trim()
      .toLowerCase();
    if (name === 'content-length') contentLength = Number(value);
    else if (name === 'transfer-encoding') chunked = value.includes('chunked');
    else if (name === 'connection') close = value === 'close';
  }
  const bodyStart = headEnd + END_OF_HEAD.length;
  // 1xx, 204 and 304 carry no body.
  if (status < 200 || status === 204 || status === 304) {
    return { response: { status, body: '', close }, length: bodyStart };
  }
  if (chunked) {
    const parts: Buffer[] = [];
    let at = bodyStart;
    for (;;) {
      const lineEnd = buf.indexOf(CRLF, at);
      if (lineEnd < 0) return undefined;
      const size = Number.parseInt(buf.toString('latin1', at, lineEnd), 16);
      const dataStart = lineEnd + CRLF.length;
      if (size === 0) {
        // No trailers are sent to it: the last chunk is followed by one empty line.
        if (buf.length < dataStart + CRLF.length) return undefined;
        const body = Buffer.concat(parts).toString('utf8');
        return { response: { status, body, close }, length: dataStart + CRLF.length };
      }
      if (buf.length < dataStart + size + CRLF.length) return undefined;
      parts.push(buf.subarray(dataStart, dataStart + size));
      at = dataStart + size + CRLF.length;
    }
  }
  if (contentLength === undefined) {
    throw new Error(
      'a response with neither Content-Length nor chunked encoding: the load generator cannot size it',
    );
  }
  if (buf.length < bodyStart + contentLength) return undefined;
  const body = buf.toString('utf8', bodyStart, bodyStart + contentLength);
  return { response: { status, body, close }, length: bodyStart + contentLength };
}
