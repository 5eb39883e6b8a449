/**
 * Text that arrives as sent (research note F6). AXe's `type` cannot press Tab (its `KeyCode.swift`
 * table has no "\t": `Error: No keycode found for character: '\t'`) and loses a trailing newline
 * (`Type.swift` `readFromStdin()` joins `readLine()` results, l.148-157). So the text is cut at
 * each Tab and newline, and those are pressed as HID keys with `axe key` — usage codes 43 (Tab)
 * and 40 (Return), as AXe's `Key.swift` help lists them ("40 - Return/Enter", "43 - Tab"; USB HID
 * Usage Tables, Keyboard/Keypad page 0x2B and 0x28). The runs between them are typed (US-keyboard
 * text) or pasted (anything else), and each run is read back from the next tree: iOS's
 * autocorrect and smart punctuation rewrite typed text (AXe's help: "iOS may apply smart
 * punctuation"), and characters get lost (hebbianai/dure #47, 158 typed as 155). A field that
 * changed without holding the run is reported as `ios_text_incomplete` with what arrived, before
 * any Return that would submit it. A protected value is never read back (a secure field shows only
 * bullets) and never left on the pasteboard.
 *
 * Not done: switching autocorrect and smart punctuation off from the driver. The sources found
 * change them on disk only: Calypso's `disable_keyboard_magic` writes `KeyboardAutocorrection`,
 * `KeyboardAutocapitalization` and related keys into a newly created device's
 * `com.apple.Preferences.plist` before its first boot; a public simulator-settings tool
 * (`server/device/ios/sim_settings.py`) writes `allowAutoCorrection` in UserSettings.plist and
 * `KeyboardAutocorrection`/`HWKeyboardAutocorrection` together, and for a booted simulator shuts
 * it down, writes and boots it again ("A reboot ends the running app"). None names a
 * smart-punctuation key. A driver action must not reboot the user's simulator, so the read-back
 * reports what iOS changed instead, and the error names the Settings switches to turn off.
 */
import type { CallContext } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import { KEYS } from "./action-contracts.ts";
import { pause } from "../../src/driver/pause.ts";
import type { AxeTree } from "./parse/axe-tree.ts";
import { messageOf } from "../../src/protocol/errors.ts";

/** Printable US-keyboard text: what AXe's key table can type. */
const US_TYPEABLE = /^[\u0020-\u007e]+$/;
/** How long a pasted secret stays on the pasteboard after Cmd+V, for the app to read it. */
const PASTE_SETTLE_MS = 500;
/** How many characters of what arrived the error quotes. */
const QUOTED = 200;

export type Piece = { kind: "text"; text: string } | { kind: "key"; code: number };

/** The text cut into runs and Tab/Return key presses ("\r\n" is one Return). */
export function pieces(text: string): Piece[] {
  const out: Piece[] = [];
  for (const part of text.split(/(\r?\n|\t)/)) {
    if (part === "") continue;
    if (part === "\t") out.push({ kind: "key", code: KEYS.tab });
    else if (part === "\n" || part === "\r\n") out.push({ kind: "key", code: KEYS.enter });
    else out.push({ kind: "text", text: part });
  }
  return out;
}

/** Editable, non-secure fields of a tree (their values can be compared), by node id and identifier. */
export function fieldValues(tree: AxeTree): Map<string, { label: string; value: string }> {
  const out = new Map<string, { label: string; value: string }>();
  for (const n of tree.nodes)
    if (/^(textField|TextArea|SearchField|TextView)$/.test(n.role))
      out.set(`${n.stableNodeId}|${n.identifier ?? ""}`, {
        label: n.identifier ?? n.name ?? n.role,
        value: n.value ?? "",
      });
  return out;
}

const remembered = new WeakMap<object, Map<string, { label: string; value: string }>>();

/** The fields of a device's newest tree, kept as the "before" of the next read-back. */
export function rememberFields(device: object, tree: AxeTree | null): void {
  if (tree && !tree.empty) remembered.set(device, fieldValues(tree));
}

export function textIncomplete(sent: string, label: string, shown: string): DriverError {
  const quoted = [...shown].length > QUOTED ? `${[...shown].slice(0, QUOTED).join("")}…` : shown;
  return new DriverError("platform_error", {
    platformCode: "ios_text_incomplete",
    retryable: false,
    message:
      `typed ${[...sent].length} characters but the field ${label} shows ${JSON.stringify(quoted)} (${[...shown].length} characters): ` +
      "iOS changed or lost some (autocorrect, smart punctuation, autocapitalization, a non-US hardware keyboard layout) or the app reformatted it; " +
      "set the field again (setElementValue clears it first) rather than typing on top, or turn those keyboard options off in the Simulator's Settings › General › Keyboard",
  });
}

/** What typing needs from the backends. */
export interface TextPorts {
  /** US-keyboard text through `axe type --stdin`. */
  type(text: string, ctx: CallContext): Promise<void>;
  key(code: number, ctx: CallContext): Promise<void>;
  /** Onto the simulator pasteboard (stdin) and Cmd+V. */
  paste(text: string, ctx: CallContext): Promise<void>;
  clearPasteboard(ctx: CallContext): Promise<void>;
  /** The next tree, parsed (null when it cannot be read). */
  tree(ctx: CallContext): Promise<AxeTree | null>;
}

/**
 * Types `text` piece by piece into the focused control. Returns "paste" when any run went through
 * the pasteboard, else "axe". A secret is neither read back nor left on the pasteboard.
 */
export async function typeExactly(
  device: object,
  ports: TextPorts,
  text: string,
  secret: boolean,
  ctx: CallContext,
): Promise<"axe" | "paste"> {
  let pasted = false;
  const all = pieces(text);
  const verify = !secret && all.some((p) => p.kind === "text");
  let before = verify ? (remembered.get(device) ?? (await readFields(ports, ctx))) : null;
  for (const p of all) {
    if (p.kind === "key") {
      await ports.key(p.code, ctx);
      continue;
    }
    if (US_TYPEABLE.test(p.text)) await ports.type(p.text, ctx);
    else {
      pasted = true;
      try {
        await ports.paste(p.text, ctx);
      } finally {
        // Not left for `simctl pbpaste`, other apps or the Mac's synced clipboard (research §4.2);
        // after a moment, so the app has read it for the paste (INFERRED timing).
        if (secret) {
          await pause(PASTE_SETTLE_MS, ctx).catch(() => undefined);
          // Even when the call was cancelled or ran out of time: the secret must not stay behind.
          await ports.clearPasteboard({ ...ctx, signal: new AbortController().signal, deadline: Date.now() + 10_000 });
        }
      }
    }
    if (!verify) continue;
    const after = await ports.tree(ctx).catch((err) => {
      if (ctx.signal.aborted) throw err;
      ctx.log.warn({ err: messageOf(err) }, "typed text not read back: no tree");
      return null;
    });
    if (!after) continue;
    rememberFields(device, after);
    const now = fieldValues(after);
    const prior = before;
    before = now;
    if ([...now.values()].some((f) => f.value.includes(p.text))) continue;
    const changed = [...now].filter(([k, f]) => prior?.get(k)?.value !== f.value).map(([, f]) => f);
    if (changed.length === 1)
      throw textIncomplete(p.text, (changed[0] as { label: string }).label, (changed[0] as { value: string }).value);
    ctx.log.warn({ changed: changed.length }, "typed text not read back: no single field changed");
  }
  return pasted ? "paste" : "axe";
}

async function readFields(
  ports: TextPorts,
  ctx: CallContext,
): Promise<Map<string, { label: string; value: string }> | null> {
  const t = await ports.tree(ctx).catch((err) => {
    if (ctx.signal.aborted) throw err;
    return null;
  });
  return t ? fieldValues(t) : null;
}

/** The ports of an AXe device: AXe for keys and typing, simctl's pasteboard for the rest. */
export function axeTextPorts(
  udid: string,
  axe: {
    type(udid: string, t: string, c: CallContext): Promise<void>;
    key(udid: string, k: number, c: CallContext): Promise<void>;
    keyCombo(udid: string, m: number[], k: number, c: CallContext): Promise<void>;
  },
  pbcopy: (udid: string, t: string, c: CallContext) => Promise<void>,
  tree: (c: CallContext) => Promise<AxeTree | null>,
): TextPorts {
  return {
    type: (t, c) => axe.type(udid, t, c),
    key: (k, c) => axe.key(udid, k, c),
    paste: async (t, c) => {
      await pbcopy(udid, t, c);
      await axe.keyCombo(udid, [CMD], KEY_V, c);
    },
    clearPasteboard: (c) => pbcopy(udid, "", c),
    tree,
  };
}

/** HID codes for Cmd+V. */
const CMD = 227;
const KEY_V = 25;
