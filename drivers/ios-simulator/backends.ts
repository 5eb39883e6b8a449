import type { CallContext } from "../../src/driver/driver.ts";
import type { Backend } from "./actions.ts";
import type { AxePort } from "./axe-port.ts";
import { doubleTapUnsupported } from "./double-tap.ts";
import { type BackendProbe, type LocateOptions, probeAxe } from "./probe.ts";
import type { WdaPort } from "./wda-port.ts";

/** Input and tree of one backend; every coordinate in points. */
export interface Hid {
  tree(ctx: CallContext): Promise<string>;
  tap(x: number, y: number, ctx: CallContext): Promise<void>;
  doubleTap(x: number, y: number, ctx: CallContext): Promise<void>;
  longPress(x: number, y: number, seconds: number, ctx: CallContext): Promise<void>;
  swipe(from: { x: number; y: number }, to: { x: number; y: number }, seconds: number, ctx: CallContext): Promise<void>;
  home(ctx: CallContext): Promise<void>;
}

/**
 * The backend for one simulator: AXe when the probe (probe.ts) finds it able to drive this
 * simulator with the selected Xcode; else a WebDriverAgent that is ready and drives this simulator
 * (matched by name); else none, which leaves the device screenshot-only. The probe says why not AXe.
 */
export async function pickBackend(
  udid: string,
  name: string,
  ports: { axe: AxePort; wda: WdaPort | null; xcodeVersion: (ctx: CallContext) => Promise<string> },
  locate: LocateOptions,
  ctx: CallContext,
): Promise<{ backend: Backend; hid: Hid | null; probe: BackendProbe }> {
  const { axe, wda } = ports;
  const probe = await probeAxe(udid, ports, locate, ctx);
  if (probe.reason)
    ctx.log.warn(
      { udid, reason: probe.reason.platformCode, why: probe.reason.error.data.message },
      "AXe is not used for this simulator",
    );
  if (!probe.reason)
    return {
      probe,
      backend: "axe",
      hid: {
        tree: (c) => axe.describeUi(udid, c),
        tap: (x, y, c) => axe.tap(udid, x, y, c),
        doubleTap: () => Promise.reject(doubleTapUnsupported()),
        longPress: (x, y, s, c) => axe.longPress(udid, x, y, s, c),
        swipe: (f, t, s, c) => axe.swipe(udid, f, t, s, c),
        home: (c) => axe.button(udid, "home", c),
      },
    };
  if (wda && (await wda.matches(name, ctx)))
    return {
      probe,
      backend: "wda",
      hid: {
        tree: (c) => wda.sourceAsAxe(c),
        tap: (x, y, c) => wda.tap(x, y, c),
        doubleTap: (x, y, c) => wda.doubleTap(x, y, c),
        longPress: (x, y, s, c) => wda.touchAndHold(x, y, s, c),
        swipe: (f, t, s, c) => wda.drag(f, t, s, c),
        home: (c) => wda.home(c),
      },
    };
  return { backend: "none", hid: null, probe };
}
