/**
 * Allocation credentials: `drf1.<claims>.<signature>`, an HMAC-SHA256 over the claims (allocation,
 * host, device) with the farm's key, which lives in the farm database (settings) and is read by
 * every host when it joins. The owning host verifies a credential without a round trip, inside the
 * transport's authentication step; whether the allocation is still live is asked of the database
 * on the connection's first request and at every heartbeat after (grants.ts).
 */
import { timingSafeEqual } from "node:crypto";
import type { SQL } from "bun";

export const CREDENTIAL_PREFIX = "drf1.";

export interface CredentialClaims {
  /** Allocation id. */
  a: string;
  /** Owning host id. */
  h: string;
  /** Device id. */
  d: string;
}

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64url");
const mac = (key: string, payload: string) => new Bun.CryptoHasher("sha256", key).update(payload).digest();

export function signCredential(key: string, claims: CredentialClaims): string {
  const payload = b64url(JSON.stringify({ a: claims.a, h: claims.h, d: claims.d }));
  return `${CREDENTIAL_PREFIX}${payload}.${b64url(mac(key, payload))}`;
}

/** The claims of a credential signed with `key`, or null (wrong key, altered, or not a credential at all). */
export function verifyCredential(key: string, credential: string): CredentialClaims | null {
  if (!credential.startsWith(CREDENTIAL_PREFIX)) return null;
  const [payload, signature, extra] = credential.slice(CREDENTIAL_PREFIX.length).split(".");
  if (!payload || !signature || extra !== undefined) return null;
  const given = Buffer.from(signature, "base64url");
  const expected = mac(key, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const c = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Partial<CredentialClaims>;
    return typeof c.a === "string" && typeof c.h === "string" && typeof c.d === "string"
      ? { a: c.a, h: c.h, d: c.d }
      : null;
  } catch {
    return null;
  }
}

const keys = new WeakMap<SQL, string>();

/** The farm's credential key: made by the first host or client that needs it, the same for all after (read once per pool). */
export async function farmKey(sql: SQL): Promise<string> {
  const known = keys.get(sql);
  if (known) return known;
  const fresh = b64url(crypto.getRandomValues(new Uint8Array(32)));
  await sql`INSERT INTO settings (key, value) VALUES ('credential-key', ${fresh}) ON CONFLICT (key) DO NOTHING`;
  const [row] = (await sql`SELECT value FROM settings WHERE key = 'credential-key'`) as { value: string }[];
  keys.set(sql, row?.value as string);
  return row?.value as string;
}
