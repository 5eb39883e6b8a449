/**
 * Text for the io.appium.settings Unicode IME, which decodes what `input text` types as modified
 * UTF-7, the IMAP mailbox-name form of RFC 3501 §5.1.3 (the IME uses Java's x-IMAP-mailbox-name
 * charset; io.appium.settings README "Unicode IME"): printable ASCII stands for itself except `&`,
 * written `&-`; any other run of characters is `&`, the base64 of its UTF-16BE code units with
 * `,` for `/` and no padding, then `-`.
 */
import { MAX_INPUT_TEXT_CHUNK } from "../parse/shell.ts";

/** Encodes `text` (no NUL) into modified UTF-7 tokens: one per ASCII character, one per shifted run. */
function tokens(text: string): string[] {
  const out: string[] = [];
  for (const run of text.match(/[\x20-\x7e]|[^\x20-\x7e]+/g) ?? []) {
    if (run === "&") out.push("&-");
    else if (/^[\x20-\x7e]$/.test(run)) out.push(run);
    else {
      // Long runs are split between code points, so no shifted token outgrows one `input text`.
      const points = [...run];
      for (let i = 0; i < points.length; i += 40) out.push(shifted(points.slice(i, i + 40).join("")));
    }
  }
  return out;
}

function shifted(run: string): string {
  const bytes = new Uint8Array(run.length * 2);
  for (let i = 0; i < run.length; i++) {
    const unit = run.charCodeAt(i);
    bytes[2 * i] = unit >> 8;
    bytes[2 * i + 1] = unit & 0xff;
  }
  return `&${Buffer.from(bytes).toString("base64").replace(/=+$/, "").replaceAll("/", ",")}-`;
}

/** `text` as modified UTF-7. */
export function encodeModifiedUtf7(text: string): string {
  return tokens(text).join("");
}

/**
 * Arguments of successive `input text` calls that make the Unicode IME commit `text`: spaces as
 * `%s` (what `input` reads as a space), a literal `%` before `s` ending its call so the two never
 * form `%s`, and no call cutting a token, so each call decodes on its own. Each still needs `quote`.
 */
export function imeTextChunks(text: string): string[] {
  const chunks: string[] = [];
  let chunk = "";
  let previous = "";
  for (const token of tokens(text)) {
    const piece = token === " " ? "%s" : token;
    if (chunk && (chunk.length + piece.length > MAX_INPUT_TEXT_CHUNK || (token === "s" && previous === "%"))) {
      chunks.push(chunk);
      chunk = "";
    }
    chunk += piece;
    previous = token;
  }
  if (chunk) chunks.push(chunk);
  return chunks;
}
