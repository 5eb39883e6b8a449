/**
 * Reads typed text back from the UI tree. `input text` loses characters on real phones: the
 * leading ones when typing starts while the field's input connection is still coming up
 * (software-mansion/argent#562: "display" arrived as "splay"), the tail in WebViews
 * (callstack/agent-device#140: an e-mail address arrived as "curti"). After typing, the focused
 * field of the next tree is compared with what was sent; a field that holds exactly a part of it
 * gets the missing part once more, and what is still incomplete is reported, never passed as
 * success.
 */
import type { CallContext } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import type { UiNode } from "../../src/protocol/types/ui.ts";
import type { AndroidShell } from "./android-shell.ts";
import { KEYCODES } from "./parse/keys.ts";
import type { AndroidUiTree } from "./parse/uiautomator.ts";
import type { DumpedTree } from "./ui-dump.ts";
import { messageOf } from "../../src/protocol/errors.ts";

/** How many characters of what arrived the error quotes. */
const QUOTED = 200;

/** The focused editable, non-password field of a tree, or null when none can be told apart. */
export function focusedField(tree: AndroidUiTree): UiNode | null {
  const focused = tree.nodes.filter(
    (n) => n.value !== null && n.role.endsWith("EditText") && tree.states[n.stableNodeId]?.includes("focused"),
  );
  if (focused.length !== 1) return null;
  const node = focused[0] as UiNode;
  // Android masks a password's characters: nothing to compare.
  return tree.states[node.stableNodeId]?.includes("password") ? null : node;
}

/** What to type so that the field holds `sent`, when it holds exactly a part of it; null when no such repair is safe. */
export function repairOf(sent: string, shown: string): { deletes: number; type: string } | null {
  const want = [...sent];
  const got = [...shown];
  if (got.length === 0 || got.length >= want.length) return null;
  // The head was lost: remove what arrived and type it all again (the input connection is up now).
  if (want.slice(want.length - got.length).join("") === shown) return { deletes: got.length, type: sent };
  // The tail was lost: type the rest.
  if (want.slice(0, got.length).join("") === shown) return { deletes: 0, type: want.slice(got.length).join("") };
  return null;
}

/**
 * Not retryable: running the same call again would type on top of what arrived. A protected
 * value is never quoted, nor its length given: only that it did not arrive whole.
 */
export function textIncomplete(sent: string, field: UiNode, secret: boolean): DriverError {
  const shown = field.value ?? "";
  const quoted = [...shown].length > QUOTED ? `${[...shown].slice(0, QUOTED).join("")}…` : shown;
  const where = field.identifier ?? field.role;
  const what = secret
    ? `the focused field ${where} does not hold the whole protected value after one retry (what arrived is not shown)`
    : `typed ${[...sent].length} characters but the focused field ${where} shows ${JSON.stringify(quoted)} (${[...shown].length} characters) after one retry`;
  return new DriverError("platform_error", {
    platformCode: "android_text_incomplete",
    retryable: false,
    message: `${what}; set the field again (setElementValue clears it first) rather than typing on top`,
  });
}

/**
 * Types `text` into the focused field and checks it arrived; `type` sends it (input text,
 * clipboard, or for a `secret` the stdin script, which also sends any repair). Text with Enter
 * or Tab is not read back: those keys may move focus or submit. Returns the tree that showed the
 * text whole (null when none was read), which the next observation may use instead of a dump.
 */
/** How the read-back reaches the phone: a tree (the dump, or the UiAutomator2 server's source) and Delete presses. */
export interface TextUi {
  dump(ctx: CallContext): Promise<DumpedTree>;
  deleteBack(count: number, ctx: CallContext): Promise<void>;
}

/** The stock shell's read-back: `uiautomator dump` and `input keyevent`. */
export const shellTextUi = (shell: AndroidShell, serial: string): TextUi => ({
  dump: (ctx) => shell.dumpUi(serial, ctx),
  deleteBack: (count, ctx) =>
    shell.inputAll(serial, [["keyevent", ...Array.from({ length: count }, () => String(KEYCODES.delete))]], ctx),
});

export async function typeAndVerify(
  ui: TextUi,
  serial: string,
  text: string,
  ctx: CallContext,
  type: (t: string) => Promise<unknown>,
  secret = false,
): Promise<DumpedTree | null> {
  await type(text);
  if (text === "" || /[\n\t]/.test(text)) return null;
  let read = await readField(ui, serial, ctx);
  if (!read?.field || (read.field.value ?? "").includes(text)) return read?.tree ?? null;
  const repair = repairOf(text, read.field.value ?? "");
  if (repair) {
    if (repair.deletes > 0) await ui.deleteBack(repair.deletes, ctx);
    await type(repair.type);
    read = await readField(ui, serial, ctx);
    if (!read?.field || (read.field.value ?? "").includes(text)) return read?.tree ?? null;
  }
  throw textIncomplete(text, read.field, secret);
}

/** A fresh dump and its focused field; a dump that fails says nothing about the text, so it is no error. */
async function readField(
  ui: TextUi,
  serial: string,
  ctx: CallContext,
): Promise<{ tree: DumpedTree; field: UiNode | null } | null> {
  try {
    const tree = await ui.dump(ctx);
    return { tree, field: focusedField(tree) };
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.log.warn({ serial, err: messageOf(err) }, "typed text not read back: no UI tree");
    return null;
  }
}
