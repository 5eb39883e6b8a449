/** The first HTTP request head of a socket connection, before it is handed to the HTTP server (sniff.ts). */
import { errorObject } from "../protocol/errors.ts";

/** Bytes of an HTTP request head (request line and headers) before the connection counts as working. */
export const MAX_HTTP_HEAD_BYTES = 16 * 1024;
/** An HTTP/1.x request line: a method token, a target without spaces or control characters, the version. */
export const REQUEST_LINE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,32} [\x21-\x7e]+ HTTP\/1\.[01]$/;

/** A whole answer with `error` as its body, written by this layer, which then closes the connection. */
function rawAnswer(status: string, error: ReturnType<typeof errorObject>): Uint8Array {
  const body = JSON.stringify({ error });
  return new TextEncoder().encode(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
}
export const HEAD_TOO_LARGE = rawAnswer(
  "431 Request Header Fields Too Large",
  errorObject("invalid_request", {
    message: `request refused: the request head exceeds ${MAX_HTTP_HEAD_BYTES} bytes`,
    details: { reason: "headTooLarge", limitBytes: MAX_HTTP_HEAD_BYTES },
  }),
);
export const BAD_REQUEST_LINE = rawAnswer(
  "400 Bad Request",
  errorObject("invalid_request", {
    message: "request refused: the request line is not METHOD TARGET HTTP/1.x",
    details: { reason: "badRequestLine" },
  }),
);

/**
 * Finds the blank line that ends an HTTP request head across chunks, so the connection counts as
 * working only once a whole request has arrived (a peer trickling its headers stays pending).
 */
export class HeadEnd {
  private tail = "";
  bytes = 0;
  /** The request line so far, until its line feed arrives. */
  private line = "";
  /** The complete request line (without its line end), once seen. */
  requestLine: string | null = null;

  /** True once the head is complete. */
  push(chunk: Uint8Array): boolean {
    this.bytes += chunk.length;
    const text = this.tail + String.fromCharCode(...chunk.subarray(0, Math.min(chunk.length, MAX_HTTP_HEAD_BYTES)));
    if (this.requestLine === null) {
      this.line += text.slice(this.tail.length);
      const nl = this.line.indexOf("\n");
      if (nl >= 0) this.requestLine = this.line.slice(0, nl).replace(/\r$/, "");
      else if (this.line.length > MAX_HTTP_HEAD_BYTES) this.line = "";
    }
    if (text.includes("\r\n\r\n") || text.includes("\n\n")) return true;
    this.tail = text.slice(-3);
    return false;
  }
}
