/**
 * `input`, following Android 10's com.android.commands.input.Input: an optional source, then
 * text|keyevent|tap|swipe|draganddrop|press|roll with exact argument counts. Bad arguments print
 * the error and usage to stderr and still exit 0, as the real tool does. The shell has already
 * removed quoting; `input text` itself only turns `%s` into a space.
 */
import { type CommandIo, delay } from "./command-io.ts";
import type { FakePhone, InputRecord } from "./fake-phone.ts";
import { refusedInput } from "./input-refusal.ts";
import { LAUNCHER } from "./system-apps.ts";

const SOURCES = new Set([
  "keyboard",
  "dpad",
  "gamepad",
  "touchscreen",
  "mouse",
  "stylus",
  "trackball",
  "touchpad",
  "touchnavigation",
  "joystick",
]);
const INVALID_ARGUMENTS = "Error: Invalid arguments for command: ";
const USAGE = "Usage: input [<source>] <command> [<arg>...]\n";

export const KEYCODES: Readonly<Record<string, number>> = {
  HOME: 3,
  BACK: 4,
  DPAD_UP: 19,
  DPAD_DOWN: 20,
  DPAD_LEFT: 21,
  DPAD_RIGHT: 22,
  DPAD_CENTER: 23,
  VOLUME_UP: 24,
  VOLUME_DOWN: 25,
  POWER: 26,
  COMMA: 55,
  PERIOD: 56,
  TAB: 61,
  SPACE: 62,
  ENTER: 66,
  DEL: 67,
  MINUS: 69,
  EQUALS: 70,
  SLASH: 76,
  AT: 77,
  MENU: 82,
  SEARCH: 84,
  ESCAPE: 111,
  FORWARD_DEL: 112,
  MOVE_HOME: 122,
  MOVE_END: 123,
  APP_SWITCH: 187,
  SLEEP: 223,
  WAKEUP: 224,
  PASTE: 279,
};
for (let i = 0; i < 10; i++) (KEYCODES as Record<string, number>)[String(i)] = 7 + i;
for (let i = 0; i < 26; i++) (KEYCODES as Record<string, number>)[String.fromCharCode(65 + i)] = 29 + i;

/** The character a key types into a field (the virtual keyboard map, without modifiers). */
function typed(keyCode: number): string | null {
  if (keyCode >= 7 && keyCode <= 16) return String(keyCode - 7);
  if (keyCode >= 29 && keyCode <= 54) return String.fromCharCode(97 + keyCode - 29);
  return { 55: ",", 56: ".", 62: " ", 69: "-", 70: "=", 76: "/", 77: "@" }[keyCode] ?? null;
}

/** KeyEvent.keyCodeFromString: a number, `KEYCODE_NAME`, or (retried with the prefix) `NAME`; else 0. */
export function keyCodeFromString(s: string): number {
  if (/^\d+$/.test(s)) return Number(s);
  const name = s.startsWith("KEYCODE_") ? s.slice(8) : s;
  return KEYCODES[name] ?? 0;
}

/** Input.sendText's escape pass, verbatim: `%s` becomes a space, nothing else changes. */
export function decodeInputText(text: string): string {
  const buff = text.split("");
  let escape = false;
  for (let i = 0; i < buff.length; i++) {
    if (escape) {
      escape = false;
      if (buff[i] === "s") {
        buff[i] = " ";
        buff.splice(--i, 1);
      }
    }
    if (buff[i] === "%") escape = true;
  }
  return buff.join("");
}

/** Java's Float.parseFloat: surrounding blanks and a trailing f/F/d/D are accepted. */
function parseFloatJava(s: string | undefined): number {
  const t = (s ?? "").trim().replace(/[fFdD]$/, "");
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(NaN|Infinity)$/.test(t))
    throw new RangeError("NumberFormatException");
  return Number(t);
}

const INJECTING = new Set(["text", "keyevent", "tap", "swipe", "draganddrop", "press", "roll"]);

/**
 * One `input` invocation: its start-up cost (FakePhone.inputStartupMs), the vendor refusal
 * (FakePhone.inputDenied), then the command. With the screen off or a keyguard up, events reach
 * no app: only the power keys act, and a swipe up dismisses a keyguard without a credential.
 */
export async function inputCommand(phone: FakePhone, argv: readonly string[], io: CommandIo): Promise<number> {
  if (phone.inputStartupMs > 0) await delay(phone.inputStartupMs, io.signal);
  const args = argv.slice(1);
  const command = args[SOURCES.has(args[0] as string) ? 1 : 0];
  if (phone.inputDenied && command !== undefined && INJECTING.has(command)) {
    const refused = refusedInput(command, Number(phone.props.get("ro.build.version.sdk") ?? 29));
    io.err(refused.err);
    return refused.status;
  }
  return runInput(phone, args, io);
}

/** The key codes that act while the screen is off or locked: POWER, SLEEP, WAKEUP. */
function powerKey(phone: FakePhone, keyCode: number): boolean {
  if (keyCode === 224) phone.power.wake();
  else if (keyCode === 223) phone.power.sleep();
  else if (keyCode === 26) phone.power.awake ? phone.power.sleep() : phone.power.wake();
  else return false;
  return true;
}

/** `input`'s commands after start-up cost and refusal; `args` without the leading `input`. Also the UiAutomator2 server's way in. */
export function runInput(phone: FakePhone, args: string[], io: CommandIo): number {
  if (args.length < 1) return (io.err(USAGE), 0);
  let index = 0;
  if (SOURCES.has(args[0] as string)) index++;
  const command = args[index];
  const length = args.length - index;
  const arg = (k: number) => args[index + k];
  const log = (r: InputRecord) => phone.inputLog.push(r);
  const runtime = () => phone.runtime();
  const reachable = phone.power.appReachable;
  try {
    switch (command) {
      case "text": {
        if (length !== 2) break;
        let text = decodeInputText(arg(1) as string);
        if (!reachable) return (log({ kind: "text", text, target: null }), 0);
        const field = runtime().focusedField;
        if (field !== null && phone.focusDropChars > 0 && phone.textSinceFocus !== field)
          text = Array.from(text).slice(phone.focusDropChars).join("");
        phone.textSinceFocus = field;
        // The selected IME sees the key events first; the Unicode IME decodes modified UTF-7 (ime.ts).
        text = phone.ime.commit(text, field);
        log({ kind: "text", text, target: runtime().typeText(text) });
        return 0;
      }
      case "keyevent": {
        if (length < 2) break;
        const longpress = arg(1) === "--longpress";
        const codes = args.slice(index + (longpress ? 2 : 1));
        if (codes.length === 0) break;
        for (const c of codes) {
          const keyCode = keyCodeFromString(c);
          if (powerKey(phone, keyCode)) phone.inputLog.push({ kind: "keyevent", keyCode, longpress, target: null });
          else if (!phone.power.appReachable)
            phone.inputLog.push({ kind: "keyevent", keyCode, longpress, target: null });
          else pressKey(phone, keyCode, longpress);
        }
        return 0;
      }
      case "tap": {
        if (length !== 3) break;
        const x = parseFloatJava(arg(1));
        const y = parseFloatJava(arg(2));
        const target = reachable ? runtime().tap(x, y, phone.view) : null;
        if (target?.source.field) phone.textSinceFocus = null;
        log({ kind: "tap", x, y, target: target ? target.resourceId || null : null });
        return 0;
      }
      case "swipe":
      case "draganddrop": {
        if (length !== 5 && length !== 6) break;
        const [x1, y1, x2, y2] = [1, 2, 3, 4].map((k) => parseFloatJava(arg(k))) as [number, number, number, number];
        if (length === 6 && !/^[+-]?\d+$/.test(arg(5) as string)) throw new RangeError("NumberFormatException");
        const durationMs = length === 6 ? Number(arg(5)) : null;
        // An upward swipe on the lock screen is what dismisses a keyguard without a credential.
        if (!reachable && phone.power.awake && command === "swipe" && y1 - y2 > phone.view.height / 4)
          phone.power.dismiss();
        const target = command === "swipe" && reachable ? runtime().swipe(x1, y1, x2, y2, phone.view) : null;
        log({ kind: command, x1, y1, x2, y2, durationMs, target: target ? target.resourceId || null : null });
        return 0;
      }
      case "press":
        if (length === 1) return 0;
        break;
      case "roll":
        if (length !== 3) break;
        parseFloatJava(arg(1));
        parseFloatJava(arg(2));
        return 0;
      default:
        io.err(`Error: Unknown command: ${command}\n${USAGE}`);
        return 0;
    }
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
  }
  io.err(`${INVALID_ARGUMENTS}${command}\n${USAGE}`);
  return 0;
}

/**
 * One key, as Input.java sends it (down then up) for each code of `input keyevent a b c`: the
 * focused EditText edits its text at the cursor, the system handles BACK and HOME.
 */
function pressKey(phone: FakePhone, keyCode: number, longpress: boolean): void {
  const rt = phone.runtime();
  let target: string | null = rt.focusedField;
  if (keyCode === 4) {
    if (phone.foreground !== LAUNCHER.package) rt.back();
  } else if (keyCode === 3) phone.foreground = LAUNCHER.package;
  else if (keyCode === 67) target = rt.deleteChar();
  else if (keyCode === 112) target = rt.forwardDeleteChar();
  else if (keyCode === 122) target = rt.moveCursor("home");
  else if (keyCode === 123) target = rt.moveCursor("end");
  else if (keyCode === 21) target = rt.moveCursor(-1);
  else if (keyCode === 22) target = rt.moveCursor(1);
  // KEYCODE_PASTE: TextView pastes the primary clip's text at the cursor; an empty clipboard does nothing.
  else if (keyCode === 279) target = phone.clipboard === null ? rt.focusedField : rt.typeText(phone.clipboard);
  else if (keyCode === 66) rt.submit(phone.view);
  else {
    const ch = typed(keyCode);
    if (ch !== null) target = rt.typeText(ch);
  }
  phone.inputLog.push({ kind: "keyevent", keyCode, longpress, target });
}
