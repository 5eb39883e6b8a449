/**
 * Typing any Unicode text through io.appium.settings' Unicode IME: the IME is selected for the
 * call, `input text` carries the text as modified UTF-7 (utf7.ts) which the IME decodes and
 * commits, and the IME the user had is selected again afterwards, also when typing fails or is
 * cancelled. Only for text that is not protected: the encoded text is a process argument.
 */
import { type CallContext, abortable } from "../../../src/driver/driver.ts";
import { DriverError } from "../../../src/driver/driver-error.ts";
import { platformError } from "../adbkit-port.ts";
import type { AndroidShell } from "../android-shell.ts";
import { isInjectionDenied, inputNotPermitted } from "../input-probe.ts";
import { KEYCODES } from "../parse/keys.ts";
import { quote } from "../parse/shell.ts";
import { imeTextChunks } from "./utf7.ts";

export const UNICODE_IME = "io.appium.settings/.UnicodeIME";

/**
 * How long a newly selected IME gets to bind to the focused field before the first key: appium-adb
 * waits 500 ms after `ime set` because the first characters are lost otherwise (appium/appium#15943).
 */
export const IME_SETTLE_MS = 500;

/** One adb shell command stays well under old adbd's 4 KiB service-name limit. */
const MAX_COMMAND_BYTES = 3_000;

const imeRefused = (out: string) =>
  new DriverError("platform_error", {
    platformCode: "android_helper_ime_unavailable",
    retryable: false,
    message: `the phone refused io.appium.settings' Unicode IME (${out.trim().slice(0, 200)}); check it with \`devicerail android helper status\`, or reinstall it with \`devicerail android helper install\``,
  });

/** The commands that type `text` while the Unicode IME is selected. */
export function imeCommands(text: string): string[] {
  const commands: string[] = [];
  for (const run of text.match(/\n|\t|[^\n\t]+/g) ?? []) {
    if (run === "\n") commands.push(`input keyevent ${KEYCODES.enter}`);
    else if (run === "\t") commands.push(`input keyevent ${KEYCODES.tab}`);
    else for (const chunk of imeTextChunks(run)) commands.push(`input text ${quote(chunk)}`);
  }
  return commands;
}

export async function typeThroughIme(
  shell: AndroidShell,
  serial: string,
  text: string,
  ctx: CallContext,
  settleMs = IME_SETTLE_MS,
): Promise<void> {
  const previous = (await shell.run(serial, "settings get secure default_input_method", ctx)).trim();
  const switched = previous !== UNICODE_IME;
  if (switched) {
    const { out, code } = await shell.exec(serial, `ime enable ${UNICODE_IME} && ime set ${UNICODE_IME}`, ctx);
    if (code !== 0 || /unknown|cannot|error|exception/i.test(out)) throw imeRefused(out);
    await abortable(Bun.sleep(settleMs), ctx);
  }
  try {
    let batch: string[] = [];
    const flush = async () => {
      if (!batch.length) return;
      const { out, code } = await shell.exec(serial, batch.join(" && "), ctx);
      batch = [];
      if (isInjectionDenied(out)) throw inputNotPermitted(shell.manufacturers.get(serial));
      if (code !== 0 || /error|exception/i.test(out))
        throw platformError(
          "android_mutation_remote_error",
          false,
          `typing through the Unicode IME failed: ${out.slice(0, 300)}`,
        );
    };
    for (const command of imeCommands(text)) {
      if (batch.join(" && ").length + command.length > MAX_COMMAND_BYTES) await flush();
      batch.push(command);
    }
    await flush();
  } finally {
    // The user's keyboard back, even when the call was cancelled: a context of its own.
    if (switched && previous && previous !== "null") {
      const restore: CallContext = { signal: new AbortController().signal, deadline: Date.now() + 5_000, log: ctx.log };
      await shell
        .exec(serial, `ime set ${quote(previous)}`, restore)
        .catch((err) => ctx.log.warn({ serial, err: String(err) }, "could not select the phone's keyboard again"));
    }
  }
}
