/**
 * How each step reaches one phone: through Appium's UiAutomator2 server where it runs
 * (helper/device-helpers.ts decides, and falls back to the shell once when it fails), else
 * through the stock shell; non-ASCII text through io.appium.settings' Unicode IME where it is
 * installed. The driver's methods call these and never choose a path themselves.
 */
import type { CallContext, Point } from "../../src/driver/driver.ts";
import type { AndroidShell } from "./android-shell.ts";
import type { DeviceHelpers, HelperReport } from "./helper/device-helpers.ts";
import { typeThroughIme } from "./helper/unicode-ime.ts";
import type { Uia2Server } from "./helper/uia2-server.ts";
import * as uia2 from "./helper/uia2-steps.ts";
import { KEYCODES } from "./parse/keys.ts";
import { isAsciiTypable } from "./parse/shell.ts";
import { shellTextUi, type TextUi, typeAndVerify } from "./text-readback.ts";
import type { DumpedTree } from "./ui-dump.ts";

export class AndroidSteps {
  constructor(
    private readonly shell: AndroidShell,
    private readonly helpers: ReadonlyMap<string, DeviceHelpers>,
    private readonly imeSettleMs: number,
  ) {}

  helpersOf(serial: string): DeviceHelpers | null {
    return this.helpers.get(serial) ?? null;
  }

  /** A step through the UiAutomator2 server where it runs, else through the shell (DeviceHelpers.fast). */
  async fast<T>(
    serial: string,
    ctx: CallContext,
    what: "tree" | "input",
    viaServer: (server: Uia2Server) => Promise<T>,
    viaShell: () => Promise<T>,
  ): Promise<{ value: T; report: HelperReport | null }> {
    const helpers = this.helpersOf(serial);
    if (!helpers) return { value: await viaShell(), report: null };
    return helpers.fast(ctx, what, viaServer, viaShell);
  }

  tree(serial: string, ctx: CallContext): Promise<{ value: DumpedTree; report: HelperReport | null }> {
    return this.fast(
      serial,
      ctx,
      "tree",
      (s) => uia2.sourceTree(s, ctx),
      () => this.shell.dumpUi(serial, ctx),
    );
  }

  /** The read-back of typed text, through the same tree source as observations. */
  textUi(serial: string): TextUi {
    const shell = shellTextUi(this.shell, serial);
    return {
      dump: async (ctx) => (await this.tree(serial, ctx)).value,
      deleteBack: (count, ctx) =>
        this.fast(
          serial,
          ctx,
          "input",
          async (s) => {
            for (let i = 0; i < count; i++) await uia2.pressKey(s, KEYCODES.delete, ctx);
          },
          () => shell.deleteBack(count, ctx),
        ).then(() => undefined),
    };
  }

  async tap(serial: string, p: Point, ctx: CallContext): Promise<void> {
    await this.fast(
      serial,
      ctx,
      "input",
      (s) => uia2.tap(s, p, ctx),
      () => this.shell.input(serial, ["tap", String(p.x), String(p.y)], ctx),
    );
  }

  /**
   * Text that is not protected: non-ASCII text through the Unicode IME where io.appium.settings
   * has it; other text through the server's text route where it runs, else `input text` (and
   * non-ASCII text without the IME through the server, else the shell's clipboard path or
   * android_text_unsupported naming the helper).
   */
  async typeText(
    serial: string,
    text: string,
    ctx: CallContext,
  ): Promise<{ tree: DumpedTree | null; via: string | null }> {
    const helpers = this.helpersOf(serial);
    let via: string | null = null;
    const unicode = !isAsciiTypable(text.replace(/[\n\t]/g, "")) && (helpers?.unicodeIme ?? false);
    const tree = await typeAndVerify(this.textUi(serial), serial, text, ctx, async (t) => {
      const viaShell = async () => {
        if (unicode) {
          await typeThroughIme(this.shell, serial, t, ctx, this.imeSettleMs);
          return "unicodeIme";
        }
        return this.shell.typeText(serial, t, ctx);
      };
      // Enter and Tab are keys, which the text route cannot send; non-ASCII text prefers the
      // Unicode IME where it is installed (Maestro #3334: UiAutomation typing can hang on Android 16).
      const used =
        /[\n\t]/.test(t) || unicode
          ? await viaShell()
          : (
              await this.fast(
                serial,
                ctx,
                "input",
                async (s) => (await uia2.typeFocused(s, t, ctx), "uiautomator2"),
                viaShell,
              )
            ).value;
      via ??= used;
    });
    return { tree, via };
  }

  /**
   * A protected value: in the server's request body where it runs (never a process argument on
   * either machine), else on the stdin of the shell's fixed script (printable ASCII only).
   */
  async typeSecret(serial: string, secret: string, ctx: CallContext): Promise<void> {
    await typeAndVerify(
      this.textUi(serial),
      serial,
      secret,
      ctx,
      async (t) => {
        await this.fast(
          serial,
          ctx,
          "input",
          (s) => uia2.typeFocused(s, t, ctx),
          () => this.shell.typeSecret(serial, t, ctx),
        );
      },
      true,
    );
  }

  async swipe(
    serial: string,
    g: { startX: number; startY: number; endX: number; endY: number; durationMs: number },
    ctx: CallContext,
  ): Promise<void> {
    await this.fast(
      serial,
      ctx,
      "input",
      (s) => uia2.swipe(s, { x: g.startX, y: g.startY }, { x: g.endX, y: g.endY }, g.durationMs, ctx),
      () => this.shell.input(serial, ["swipe", ...[g.startX, g.startY, g.endX, g.endY, g.durationMs].map(String)], ctx),
    );
  }

  doubleTap(serial: string, p: Point, ctx: CallContext) {
    return this.fast(
      serial,
      ctx,
      "input",
      (s) => uia2.doubleTap(s, p, ctx),
      () =>
        this.shell.inputAll(
          serial,
          [
            ["tap", String(p.x), String(p.y)],
            ["tap", String(p.x), String(p.y)],
          ],
          ctx,
        ),
    );
  }

  longPress(serial: string, p: Point, durationMs: number, ctx: CallContext) {
    return this.fast(
      serial,
      ctx,
      "input",
      (s) => uia2.longPress(s, p, durationMs, ctx),
      () =>
        this.shell.input(
          serial,
          ["swipe", String(p.x), String(p.y), String(p.x), String(p.y), String(durationMs)],
          ctx,
        ),
    );
  }

  key(serial: string, keycode: number, ctx: CallContext) {
    return this.fast(
      serial,
      ctx,
      "input",
      (s) => uia2.pressKey(s, keycode, ctx),
      () => this.shell.input(serial, ["keyevent", String(keycode)], ctx),
    );
  }
}
