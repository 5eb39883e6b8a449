import type { ConnectionGrant } from "../rpc/connection.ts";

/**
 * Turns a presented credential that is not the host's token into a grant (a farm allocation's
 * credential), or null when it is not one this host honours. Synchronous: it runs inside the
 * transport's authentication step; anything needing I/O happens in the grant's first check.
 */
/**
 * `bytes` random bytes as base64url, for tokens, tickets and view keys. Web Crypto, not
 * node:crypto, whose load would cost every CLI command and `serve` start (scripts/bench/startup.ts).
 */
export const randomSecret = (bytes: number): string =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");

export type GrantIssuer = (credential: string) => ConnectionGrant | null;

/** The plain-text line an NDJSON client sends first when the daemon has a token: `DEVICERAIL-TOKEN <token>`. */
export const TOKEN_LINE_PREFIX = "DEVICERAIL-TOKEN ";
/** The longest token line accepted (prefix, token, CR); longer first lines are refused unread. */
export const MAX_TOKEN_LINE_BYTES = 1_024;
/** Token length bounds: long enough not to be guessed, short enough to fit one line and one header. */
export const MIN_TOKEN_LENGTH = 16;
export const MAX_TOKEN_LENGTH = 512;

/** Why a token value is unusable, or null. Never includes the value: tokens must not reach logs. */
export function tokenProblem(token: string): string | null {
  if (token.length < MIN_TOKEN_LENGTH || token.length > MAX_TOKEN_LENGTH)
    return `a token must have ${MIN_TOKEN_LENGTH} to ${MAX_TOKEN_LENGTH} characters`;
  if (!/^[\x21-\x7e]+$/.test(token)) return "a token may contain printable ASCII characters only (no spaces)";
  return null;
}

const digest = (text: string): Buffer => Buffer.from(new Bun.CryptoHasher("sha256").update(text).digest());

/**
 * The configured shared secret. Candidates are compared as SHA-256 digests with timingSafeEqual:
 * equal lengths whatever the candidate, so neither the content nor the length leaks through timing.
 */
export class AccessToken {
  private readonly expected: Buffer;

  constructor(token: string) {
    const problem = tokenProblem(token);
    if (problem) throw new Error(problem);
    this.expected = digest(token);
  }

  matches(candidate: string): boolean {
    // Bun's global crypto.timingSafeEqual: node:crypto would cost every CLI command ~5 MiB at start.
    return crypto.timingSafeEqual(digest(candidate), this.expected);
  }

  /** `Authorization: Bearer <token>` (the scheme is case-insensitive, RFC 9110 §11.1). */
  matchesAuthorization(header: string | null): "missing" | "wrong" | "ok" {
    if (header === null) return "missing";
    const m = /^bearer +(\S+)$/i.exec(header);
    if (!m) return "wrong";
    return this.matches(m[1] as string) ? "ok" : "wrong";
  }

  /** `toJSON`/`inspect` print nothing useful, so a token object logged by mistake shows no secret. */
  toJSON(): string {
    return "[token]";
  }
}
