/**
 * What the first bytes of a TCP or Unix socket connection say it speaks
 * (docs/protocol/transport-and-framing.md#transports): NDJSON, HTTP, the token line, or the
 * stdio relay line of `devicerail serve` relaying its stdin/stdout to the running daemon.
 */
import { TOKEN_LINE_PREFIX } from "./token.ts";

/**
 * The line `devicerail serve` on stdio sends first (after the token line, when one is needed) when
 * it relays its stdin and stdout to the daemon of its data directory: the connection then reports
 * transport `stdio` in its hello, as the client on the other end of the relay speaks stdio.
 */
export const STDIO_RELAY_LINE = "DEVICERAIL-STDIO\n";

export type Protocol = "ndjson" | "http" | "token" | "relay" | "refuse" | "undecided";

const TOKEN = new TextEncoder().encode(TOKEN_LINE_PREFIX);
export const RELAY = new TextEncoder().encode(STDIO_RELAY_LINE);
const isLetter = (b: number) => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
const isJsonStart = (b: number) => b === 0x7b || b === 0x5b || b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/** Whether `head` begins with `line`: "yes", "maybe" (what arrived so far is a start of it) or "no". */
export function beginsWith(head: Uint8Array, line: Uint8Array): "yes" | "maybe" | "no" {
  const n = Math.min(head.length, line.length);
  for (let i = 0; i < n; i++) if (head[i] !== line[i]) return "no";
  return head.length >= line.length ? "yes" : "maybe";
}

/**
 * What the first bytes of a connection say it speaks: `{`, `[` or whitespace is NDJSON; the token
 * line's prefix is NDJSON after authentication; the stdio relay line is NDJSON reported as stdio;
 * any other ASCII letter is an HTTP request line (so a browser's request, whatever its body, is
 * only ever parsed as HTTP); anything else is refused.
 */
export function classify(head: Uint8Array): Protocol {
  if (head.length === 0) return "undecided";
  const first = head[0] as number;
  if (isJsonStart(first)) return "ndjson";
  if (!isLetter(first)) return "refuse";
  const relay = beginsWith(head, RELAY);
  if (relay === "yes") return "relay";
  const token = beginsWith(head, TOKEN);
  if (token === "yes") return "token";
  return relay === "maybe" || token === "maybe" ? "undecided" : "http";
}
