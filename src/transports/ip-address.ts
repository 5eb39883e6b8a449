/** IP address literals: which are loopback, which are literals at all (host names are not). */

/** True for a loopback address literal: 127.0.0.0/8, ::1, or 127.0.0.0/8 mapped into IPv6. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (isLoopbackV4(bare)) return true;
  if (!bare.includes(":")) return false;
  let normalized: string;
  try {
    // The URL parser canonicalises IPv6 literals (0:0:0:0:0:0:0:1 → ::1, ::ffff:7f00:1 for mapped IPv4).
    normalized = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return false;
  }
  if (normalized === "::1") return true;
  const mapped = /^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(normalized);
  return mapped !== null && parseInt(mapped[1]!, 16) >> 8 === 127;
}

function isV4Literal(address: string): boolean {
  const parts = address.split(".");
  return parts.length === 4 && parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255);
}

const isLoopbackV4 = (address: string) => isV4Literal(address) && address.startsWith("127.");

export const isIpLiteral = (host: string) =>
  isV4Literal(host) || (host.includes(":") && URL.canParse(`http://[${host.replace(/^\[|\]$/g, "")}]/`));
