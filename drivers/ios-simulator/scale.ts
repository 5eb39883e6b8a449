/**
 * The point scale of one simulator, and where the newest tree's frames lie on the newest
 * screenshot (research F2, F9).
 *
 * The scale comes from the Simulator itself: `simctl getenv <udid> SIMULATOR_MAINSCREEN_SCALE`
 * (with `_WIDTH`/`_HEIGHT`, the framebuffer in pixels), read at connect. simctl prints the value
 * from the device's launchd environment, `%f`-style: an iPhone 8 Plus app printed
 * `SIMULATOR_MAINSCREEN_SCALE: 3.000000`, `SIMULATOR_MAINSCREEN_WIDTH: 1242`,
 * `SIMULATOR_MAINSCREEN_HEIGHT: 2208` from the same environment (ClintJang/sample-swift-progressinfo
 * README). Other tools read it the same way to turn pixels into points (research F2: an AXe
 * wrapper's `InteractionEngine`, a TypeScript `readIosSimulatorMainScreenScale()`). Both axes of its pixel
 * size are checked against the screenshot (1 %); when getenv says nothing usable, the scale is
 * taken from a screenshot and a tree whose root covers it on both axes. Until one of the two has
 * given it, coordinate input is refused (`ios_scale_unknown`) rather than sent as scale 1, which
 * lands taps 2-3x off and reports success (AlexGladkov/claude-in-mobile PR #68, idb #718).
 *
 * Layouts: the AX root may be a window smaller than the screen at an origin (iPad split view,
 * Stage Manager; frames are screen coordinates, UIAccessibility's `accessibilityFrame`), or a
 * landscape-only app letterboxed on portrait hardware (a landscape root on a portrait screenshot).
 * The letterbox is mapped as AXe maps it (`OrientationAwareCoordinates.swift`, v1.8.0: fit =
 * min(pw/lw, ph/lh), the UI centred, physical = offset + logical × fit); AXe ≥ 1.7.0 takes taps in
 * the tree's logical points and does that mapping itself. Any other shape is an orientation
 * mismatch: bounds are null rather than wrong, and coordinate input is refused
 * (`ios_orientation_mismatch`).
 */
import type { CallContext, Logger } from "../../src/driver/driver.ts";
import type { UiNode } from "../../src/protocol/types/ui.ts";
import type { SimctlPort } from "./simctl-port.ts";
import { platformError } from "./tool-process.ts";

/** How far two sizes or scales may differ and still agree. */
const TOLERANCE = 0.01;
const GETENV_CEILING_MS = 5_000;
/** While getenv has given nothing, it is asked again at most this often (at observations). */
const GETENV_RETRY_MS = 30_000;

export type ScaleSource = "simctl" | "screenshot";
export type Layout = "fullScreen" | "window" | "letterbox" | "mismatch";

interface Size {
  width: number;
  height: number;
}

/** The main screen as simctl getenv gives it: scale, and the framebuffer in pixels when known. */
export interface MainScreen {
  scale: number;
  width: number | null;
  height: number | null;
}

/** Screenshot pixels = offset + tree points × k (letterbox: k includes the fit). */
type FrameMap =
  | { layout: "fullScreen" | "window"; k: number; root: Size }
  | { layout: "letterbox"; k: number; root: Size; fit: number; offX: number; offY: number }
  | { layout: "mismatch"; root: Size; detail: string };

const near = (a: number, b: number) => Math.abs(a - b) <= TOLERANCE * Math.max(Math.abs(a), Math.abs(b));
const round2 = (v: number) => Math.round(v * 100) / 100;

/** The three getenv answers as a MainScreen, or null when the scale is missing or not a sane number. */
export function parseMainScreen(scale: string | null, width: string | null, height: string | null): MainScreen | null {
  const s = scale === null ? Number.NaN : Number.parseFloat(scale);
  if (!Number.isFinite(s) || s <= 0 || s > 10) return null;
  const px = (v: string | null) => (v !== null && /^\d+$/.test(v) && Number(v) > 0 ? Number(v) : null);
  return { scale: s, width: px(width), height: px(height) };
}

export class ScreenScale {
  /** What getenv said; null until it said something usable. */
  private env: MainScreen | null = null;
  private envAskedAt = 0;
  /** Whether getenv's pixel size agrees with the screenshot: null before a screenshot or without a size. */
  private envAgrees: boolean | null = null;
  private frames: FrameMap | null = null;
  scale: number | null = null;
  source: ScaleSource | null = null;

  /** Asks simctl (three getenv calls, bounded); a failure leaves the scale unknown, never fails the caller. */
  async readEnv(simctl: SimctlPort, udid: string, ctx: CallContext, log: Logger): Promise<void> {
    this.envAskedAt = Date.now();
    const c: CallContext = {
      ...ctx,
      deadline: Math.min(ctx.deadline ?? Number.POSITIVE_INFINITY, Date.now() + GETENV_CEILING_MS),
    };
    try {
      const [s, w, h] = await Promise.all(
        ["SCALE", "WIDTH", "HEIGHT"].map((k) => simctl.getenv(udid, `SIMULATOR_MAINSCREEN_${k}`, c)),
      );
      this.env = parseMainScreen(s ?? null, w ?? null, h ?? null);
      if (!this.env)
        log.warn(
          { udid, scale: s },
          "simctl getenv SIMULATOR_MAINSCREEN_SCALE gave no scale: taken from the first screenshot and tree instead",
        );
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      log.warn(
        { udid, err: String(err) },
        "simctl getenv SIMULATOR_MAINSCREEN_SCALE failed: taken from the first screenshot and tree instead",
      );
    }
    if (this.env && this.source !== "simctl" && this.envAgrees !== false) {
      this.scale = this.env.scale;
      this.source = "simctl";
    }
  }

  /** Whether an observation should ask simctl again: nothing usable yet, and not asked lately. */
  wantsEnv(now = Date.now()): boolean {
    return this.env === null && this.source === null && now - this.envAskedAt >= GETENV_RETRY_MS;
  }

  /** Cross-checks getenv's pixel size against a screenshot (either orientation); disagreeing, its scale is not used. */
  onScreenshot(png: Size): void {
    if (!this.env) return;
    const { width: w, height: h } = this.env;
    if (w === null || h === null) {
      this.envAgrees = null;
    } else {
      this.envAgrees = (near(w, png.width) && near(h, png.height)) || (near(w, png.height) && near(h, png.width));
    }
    if (this.envAgrees === false && this.source === "simctl") {
      this.scale = null;
      this.source = null;
    } else if (this.envAgrees !== false && this.source !== "simctl") {
      this.scale = this.env.scale;
      this.source = "simctl";
    }
  }

  /**
   * Decides how a tree whose root frame is `root` (points) lies on a `png` screenshot and returns
   * the factor its frames are multiplied by (parseAxeTree's scaleOf); `place` then finishes the nodes.
   */
  frameScale(root: Size, png: Size): number {
    if (this.scale === null) this.scaleFromScreenshot(root, png);
    const s = this.scale;
    if (s === null) {
      this.frames = null;
      return 1;
    }
    const screen = { width: png.width / s, height: png.height / s };
    if (root.width <= screen.width * (1 + TOLERANCE) && root.height <= screen.height * (1 + TOLERANCE)) {
      this.frames = {
        layout: near(root.width, screen.width) && near(root.height, screen.height) ? "fullScreen" : "window",
        k: s,
        root,
      };
    } else if (
      root.width > root.height &&
      screen.height > screen.width &&
      near(root.width, screen.height) &&
      near(root.height, screen.width)
    ) {
      const fit = Math.min(screen.width / root.width, screen.height / root.height);
      this.frames = {
        layout: "letterbox",
        k: s * fit,
        root,
        fit,
        offX: (screen.width - root.width * fit) / 2,
        offY: (screen.height - root.height * fit) / 2,
      };
    } else {
      this.frames = {
        layout: "mismatch",
        root,
        detail: `the tree's root is ${root.width}×${root.height} pt, the screenshot ${png.width}×${png.height} px at scale ${s}`,
      };
    }
    return this.frames.layout === "mismatch" ? 1 : this.frames.k;
  }

  /** Without getenv: a root that covers the screenshot on both axes (or, letterboxed, both axes swapped) gives the scale. */
  private scaleFromScreenshot(root: Size, png: Size): void {
    if (root.width <= 0 || root.height <= 0) return;
    const [sx, sy] = [png.width / root.width, png.height / root.height];
    const [lx, ly] = [png.width / root.height, png.height / root.width];
    const s = near(sx, sy) ? sx : root.width > root.height && png.height > png.width && near(lx, ly) ? lx : null;
    if (s === null) return;
    this.scale = Math.round(s * 1000) / 1000;
    this.source = "screenshot";
  }

  /** Finishes the bounds parseAxeTree scaled: the letterbox offset added, or null where they cannot be placed. */
  place(nodes: UiNode[], png: Size): void {
    const f = this.frames;
    if (f && f.layout !== "mismatch") {
      const dx = f.layout === "letterbox" ? Math.round(f.offX * (this.scale as number)) : 0;
      const dy = f.layout === "letterbox" ? Math.round(f.offY * (this.scale as number)) : 0;
      if (dx || dy)
        for (const n of nodes) if (n.bounds) n.bounds = { ...n.bounds, x: n.bounds.x + dx, y: n.bounds.y + dy };
      // A window must lie on the screenshot: a root beyond it is a mismatch too.
      const b = nodes[0]?.bounds;
      const slack = (v: number) => v * TOLERANCE + 1;
      if (
        b &&
        (b.x < -slack(png.width) ||
          b.y < -slack(png.height) ||
          b.x + b.width > png.width + slack(png.width) ||
          b.y + b.height > png.height + slack(png.height))
      )
        this.frames = {
          layout: "mismatch",
          root: f.root,
          detail: `the tree's root lies at ${b.x},${b.y} ${b.width}×${b.height} px, off the ${png.width}×${png.height} px screenshot`,
        };
    }
    if (this.frames === null || this.frames.layout === "mismatch") for (const n of nodes) n.bounds = null;
  }

  /** Screenshot pixels to the points the input backend takes; refused while they cannot be mapped. */
  toPoints(x: number, y: number): [number, number] {
    const s = this.scale;
    if (s === null)
      throw platformError(
        "ios_scale_unknown",
        true,
        "simctl getenv SIMULATOR_MAINSCREEN_SCALE gave no scale and no screenshot with a tree has given one yet",
        "the simulator's point scale is not known yet, so a coordinate would land in the wrong place: observe with the UI tree and try again, or check that `xcrun simctl getenv <udid> SIMULATOR_MAINSCREEN_SCALE` prints the scale",
      );
    const f = this.frames;
    if (f?.layout === "mismatch")
      throw platformError(
        "ios_orientation_mismatch",
        false,
        f.detail,
        "the app's accessibility frames do not match the screenshot's orientation, so screen coordinates cannot be mapped to the app: rotate the simulator back to the app's orientation (or use selectors) and observe again",
      );
    const [px, py] = [x / s, y / s];
    if (f?.layout !== "letterbox") return [round2(px), round2(py)];
    const [lx, ly] = [(px - f.offX) / f.fit, (py - f.offY) / f.fit];
    if (lx < 0 || ly < 0 || lx > f.root.width || ly > f.root.height)
      throw platformError(
        "ios_point_outside_app",
        false,
        `(${x}, ${y}) px is in the letterbox bars`,
        "the point is in the bars around a letterboxed landscape app: aim inside the app's area (its root node's bounds)",
      );
    return [round2(lx), round2(ly)];
  }

  /** For the observation's `ios` metadata. */
  metadata(): {
    scale: number | null;
    scaleSource: ScaleSource | null;
    scaleCheck: "agrees" | "disagrees" | null;
    layout: Layout | null;
    orientationMismatch: boolean;
  } {
    return {
      scale: this.scale,
      scaleSource: this.source,
      scaleCheck: this.envAgrees === null ? null : this.envAgrees ? "agrees" : "disagrees",
      layout: this.frames?.layout ?? null,
      orientationMismatch: this.frames?.layout === "mismatch",
    };
  }
}
