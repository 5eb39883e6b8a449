/**
 * Driver steps through the UiAutomator2 server's routes (docs/android-helpers.md › Routes): the
 * page source as a UI tree, gestures at coordinates, key codes and text into the focused field.
 * The text travels in the request body, so a protected value is never a process argument.
 */
import type { CallContext } from "../../../src/driver/driver.ts";
import { platformError } from "../adbkit-port.ts";
import { parseUiautomatorDump, UiDumpError } from "../parse/uiautomator.ts";
import type { DumpedTree } from "../ui-dump.ts";
import type { Uia2Server } from "./uia2-server.ts";

type Point = { x: number; y: number };

export async function sourceTree(server: Uia2Server, ctx: CallContext): Promise<DumpedTree> {
  const xml = await server.call("GET", "/source", undefined, ctx);
  if (typeof xml !== "string") throw platformError("android_helper_server_failed", true, "GET /source gave no XML");
  try {
    return { ...parseUiautomatorDump(xml, { tags: "class" }), compressed: false };
  } catch (err) {
    if (err instanceof UiDumpError) throw platformError("android_helper_server_failed", true, err.message);
    throw err;
  }
}

export const tap = (s: Uia2Server, p: Point, ctx: CallContext) =>
  s.call("POST", "/appium/gestures/click", { offset: p }, ctx);

export const doubleTap = (s: Uia2Server, p: Point, ctx: CallContext) =>
  s.call("POST", "/appium/gestures/double_click", { offset: p }, ctx);

export const longPress = (s: Uia2Server, p: Point, durationMs: number, ctx: CallContext) =>
  s.call("POST", "/appium/gestures/long_click", { offset: p, duration: durationMs }, ctx);

/** A point-to-point swipe of a given duration: W3C actions with a touch pointer. */
export const swipe = (s: Uia2Server, from: Point, to: Point, durationMs: number, ctx: CallContext) =>
  s.call(
    "POST",
    "/actions",
    {
      actions: [
        {
          type: "pointer",
          id: "finger1",
          parameters: { pointerType: "touch" },
          actions: [
            { type: "pointerMove", duration: 0, x: from.x, y: from.y },
            { type: "pointerDown", button: 0 },
            { type: "pointerMove", duration: durationMs, x: to.x, y: to.y },
            { type: "pointerUp", button: 0 },
          ],
        },
      ],
    },
    ctx,
  );

export const pressKey = (s: Uia2Server, keycode: number, ctx: CallContext) =>
  s.call("POST", "/appium/device/press_keycode", { keycode }, ctx);

/** Appends `text` to the focused field (the server sets the field to its text plus this). */
export const typeFocused = (s: Uia2Server, text: string, ctx: CallContext) =>
  s.call("POST", "/keys", { text, replace: false }, ctx);
