/** How device text too long for a field ends: what was cut stays visible (docs/protocol/limits.md#device-text). */
export const truncationMarker = (removed: number) => `…[truncated ${removed} chars]`;

function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  return n;
}

/** The UTF-16 index after the first `count` code points of `s`. */
function indexAfter(s: string, count: number): number {
  let i = 0;
  for (let n = 0; n < count && i < s.length; n++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return i;
}

const TRAILING_MARKER = /…\[truncated (\d{1,15}) chars\]$/;

/**
 * `s` when it has at most `max` code points; otherwise its start followed by the marker
 * "…[truncated N chars]" (N: code points left out), `max` code points in all, so a reader sees
 * both that and how much was cut. Text clipped before (by a driver, then by the daemon) counts
 * what the earlier clip left out too.
 */
export function clipText(s: string, max: number): string {
  // UTF-16 length bounds the code point count from above: most strings stop here.
  if (s.length <= max) return s;
  let total = codePoints(s);
  if (total <= max) return s;
  const earlier = TRAILING_MARKER.exec(s);
  if (earlier) {
    s = s.slice(0, earlier.index);
    total = codePoints(s) + Number(earlier[1]);
  }
  let keep = max - truncationMarker(total - max).length;
  // A shorter kept part means a larger N, whose marker may be a digit longer.
  while (keep > 0 && keep + truncationMarker(total - keep).length > max) keep--;
  keep = Math.max(keep, 0);
  return s.slice(0, indexAfter(s, keep)) + truncationMarker(total - keep);
}
