/**
 * Input methods of the simulated phone: the `ime` shell command and io.appium.settings' Unicode
 * IME, which turns the modified UTF-7 that `input text` types into Unicode text.
 *
 * The selected and enabled IMEs live in the secure settings `default_input_method` and
 * `enabled_input_methods` (colon-separated ids), as on Android, so `settings get` and `ime` agree.
 * Texts are those of AOSP InputMethodManagerService's shell command (`ime list|enable|disable|set`,
 * stored public copy index id 56468802837): `Input method <id>: now enabled for user #0`, `…already
 * enabled…`, `Input method <id> selected for user #0`, and on stderr `Unknown input method <id> cannot
 * be enabled|selected for user #0` with ShellCommandResult.FAILURE (-1, exit status 255). Android 9 and
 * older print the same without ` for user #0`; the fake always prints the modern form.
 */
import type { CommandIo } from "./command-io.ts";
import { unsupported } from "./commands-shell.ts";
import type { FakePhone } from "./fake-phone.ts";

/** Gboard, the stock keyboard of a Pixel: its id as `ime list -s` prints it. */
export const STOCK_IME = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME";
export const UNICODE_IME = "io.appium.settings/.UnicodeIME";

const DEFAULT = "secure/default_input_method";
const ENABLED = "secure/enabled_input_methods";

export class ImeService {
  /** UnicodeIME's state: inside a `&…` run, the run so far, and the field it is typed into. */
  private shifted = false;
  private run = "";
  private runField: string | null = null;

  constructor(private readonly phone: FakePhone) {
    phone.settings.set(DEFAULT, STOCK_IME);
    phone.settings.set(ENABLED, STOCK_IME);
  }

  /** Every installed IME (`ime list -a -s`): the stock keyboard, then those of installed packages. */
  get available(): string[] {
    return [STOCK_IME, ...[...this.phone.packages.installed.values()].flatMap((p) => p.apk.imes)];
  }

  /** The enabled IMEs, in the order they were enabled. */
  get enabled(): string[] {
    return (this.phone.settings.get(ENABLED) ?? "")
      .split(":")
      .map((e) => e.split(";")[0] as string)
      .filter(Boolean);
  }

  /** The selected IME, or null when none is. */
  get selected(): string | null {
    return this.phone.settings.get(DEFAULT) || null;
  }

  private setEnabled(ids: string[]): void {
    this.phone.settings.set(ENABLED, ids.join(":"));
  }

  private select(id: string): void {
    this.phone.settings.set(DEFAULT, id);
    // A new IME service instance starts with no pending UTF-7 run.
    this.shifted = false;
    this.run = "";
  }

  /**
   * When the selected IME goes away (disabled, its package removed), Android chooses another
   * default (InputMethodManagerService chooseNewDefaultIMELocked, which prefers a system IME); the
   * fake takes the stock keyboard if it is enabled, else the first enabled IME, else none.
   */
  private reselect(): void {
    const enabled = this.enabled;
    if (this.selected && enabled.includes(this.selected)) return;
    this.select(enabled.includes(STOCK_IME) ? STOCK_IME : (enabled[0] ?? ""));
  }

  packageRemoved(pkg: string): void {
    this.setEnabled(this.enabled.filter((id) => !id.startsWith(`${pkg}/`)));
    this.reselect();
  }

  /** The `ime` command. */
  command(argv: readonly string[], io: CommandIo): number {
    const [, verb, ...rest] = argv;
    const args = rest.filter((a, i) => !["--user", "-u"].includes(a) && !["--user", "-u"].includes(rest[i - 1] ?? ""));
    if (verb === "list") {
      if (!args.includes("-s") || args.some((a) => a !== "-s" && a !== "-a")) return unsupported(this.phone, argv, io);
      const ids = args.includes("-a") ? this.available : this.enabled;
      io.out(ids.map((id) => `${id}\n`).join(""));
      return 0;
    }
    const [id, extra] = args;
    if (!id || extra !== undefined || id.startsWith("-")) return unsupported(this.phone, argv, io);
    if (verb === "enable" || verb === "disable") {
      const enable = verb === "enable";
      if (enable && !this.available.includes(id)) {
        io.err(`Unknown input method ${id} cannot be enabled for user #0\n`);
        return 255;
      }
      const was = this.enabled.includes(id);
      if (enable && !was) this.setEnabled([...this.enabled, id]);
      if (!enable && was) {
        this.setEnabled(this.enabled.filter((e) => e !== id));
        this.reselect();
      }
      io.out(`Input method ${id}: ${was === enable ? "already" : "now"} ${verb}d for user #0\n`);
      return 0;
    }
    if (verb === "set") {
      // Only an enabled IME can be selected (setInputMethodForTesting checks the enabled list;
      // decompiled services.jar smali, index id 26790200710).
      if (!this.enabled.includes(id)) {
        io.err(`Unknown input method ${id} cannot be selected for user #0\n`);
        return 255;
      }
      this.select(id);
      io.out(`Input method ${id} selected for user #0\n`);
      return 0;
    }
    return unsupported(this.phone, argv, io);
  }

  /**
   * What the selected IME commits for the characters `input text` sends as key events into
   * `field`. Only the Unicode IME changes them; the stock keyboard, AppiumIME and EmptyIME let the
   * key events reach the field as typed (AppiumIME's `/action/` editor actions are not simulated).
   *
   * UnicodeIME (github:appium/io.appium.settings app/src/main/java/io/appium/settings/UnicodeIME.java,
   * tag v7.1.9): outside a run, `&` starts one and printable ASCII 0x20–0x7E is committed as is; in a
   * run every character is buffered until `-`, then the `&…-` run is decoded with Java's
   * `x-IMAP-mailbox-name` charset and committed. On a CharacterCodingException (malformed
   * modified UTF-7) it commits the undecoded run itself, `&` and `-` included. The run survives
   * from one `input text` to the next and is dropped when input starts in another field
   * (onStartInput without `restarting`) or the IME changes.
   */
  commit(keys: string, field: string | null): string {
    if (this.selected !== UNICODE_IME) return keys;
    if (this.shifted && field !== this.runField) {
      this.shifted = false;
      this.run = "";
    }
    let out = "";
    for (const c of keys) {
      if (!this.shifted) {
        if (c === "&") {
          this.shifted = true;
          this.run = "&";
          this.runField = field;
        } else out += c; // printable ASCII is committed; anything else reaches the field as its key event
        continue;
      }
      this.run += c;
      if (c !== "-") continue;
      this.shifted = false;
      out += decodeImapRun(this.run) ?? this.run;
      this.run = "";
    }
    return out;
  }
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,";

/**
 * One `&…-` run of modified UTF-7 (RFC 3501 §5.1.3) decoded as ICU's IMAP-mailbox-name converter
 * does (unicode-org/icu icu4c/source/common/ucnv_u7.cpp `_IMAPToUnicodeWithOffsets`), or null
 * where it reports an illegal sequence: a character outside the alphabet (`/` included, `,` is 63),
 * a decoded unit that is printable ASCII (0x20–0x7E must represent itself), or leftover bits that
 * are not zero or that do not end on a unit boundary (base64 count not 0, 3 or 6 mod 8). `&-` is
 * `&`. UTF-16 units are emitted as decoded, surrogate pairs included.
 */
export function decodeImapRun(run: string): string | null {
  if (!run.startsWith("&") || !run.endsWith("-")) return null;
  const body = run.slice(1, -1);
  if (body === "") return "&";
  let bits = 0;
  let nbits = 0;
  let out = "";
  for (const c of body) {
    const v = BASE64.indexOf(c);
    if (v < 0) return null;
    bits = (bits << 6) | v;
    nbits += 6;
    if (nbits >= 16) {
      nbits -= 16;
      const unit = (bits >> nbits) & 0xffff;
      bits &= (1 << nbits) - 1;
      if (unit >= 0x20 && unit <= 0x7e) return null;
      out += String.fromCharCode(unit);
    }
  }
  if (bits !== 0 || ![0, 3, 6].includes(body.length % 8)) return null;
  return out;
}

/** Modified UTF-7 as io.appium.settings build/lib/commands/utf7.js `imap.encode` writes it (for tests). */
export function encodeImapUtf7(text: string): string {
  return text.replace(/&|[^\x20-\x7e]+/g, (run) => {
    if (run === "&") return "&-";
    const bytes = new Uint8Array(run.length * 2);
    for (let i = 0; i < run.length; i++) {
      bytes[2 * i] = run.charCodeAt(i) >> 8;
      bytes[2 * i + 1] = run.charCodeAt(i) & 0xff;
    }
    return `&${Buffer.from(bytes).toString("base64").replace(/=+$/, "").replaceAll("/", ",")}-`;
  });
}
