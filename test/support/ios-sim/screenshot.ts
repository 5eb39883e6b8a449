/**
 * `simctl io screenshot` pixels: the frontmost screen painted at the native framebuffer size
 * (points × scale), one flat box per visible element at its frame × scale, so a test can check
 * that a normalized node's pixel bounds land on the right pixels. JPEG is a valid baseline file of
 * the right size in one flat grey (the background's luminance): enough for magic bytes and size.
 */
import { type Box, type Rgb, renderPng } from "../../../drivers/mock/render-png.ts";
import { frontLayout, screenTree } from "./apps.ts";
import type { Appearance, SimDevice } from "./sim-state.ts";
import { type SimNode, walk } from "./ui-tree.ts";

type ColourName =
  | "background"
  | "text"
  | "button"
  | "buttonText"
  | "disabled"
  | "disabledText"
  | "field"
  | "fieldBorder"
  | "focus"
  | "on"
  | "off"
  | "bar"
  | "selected"
  | "locked";
export type Colours = Record<ColourName, Rgb>;

export const PALETTE: Record<Appearance, Colours> = {
  light: {
    background: [242, 242, 247],
    text: [0, 0, 0],
    button: [0, 122, 255],
    buttonText: [255, 255, 255],
    disabled: [209, 209, 214],
    disabledText: [142, 142, 147],
    field: [255, 255, 255],
    fieldBorder: [199, 199, 204],
    focus: [0, 122, 255],
    on: [52, 199, 89],
    off: [229, 229, 234],
    bar: [249, 249, 249],
    selected: [0, 122, 255],
    locked: [10, 10, 30],
  },
  dark: {
    background: [0, 0, 0],
    text: [255, 255, 255],
    button: [10, 132, 255],
    buttonText: [255, 255, 255],
    disabled: [58, 58, 60],
    disabledText: [142, 142, 147],
    field: [28, 28, 30],
    fieldBorder: [58, 58, 60],
    focus: [10, 132, 255],
    on: [48, 209, 88],
    off: [57, 57, 61],
    bar: [22, 22, 24],
    selected: [10, 132, 255],
    locked: [10, 10, 30],
  },
};

type Rect = { x: number; y: number; width: number; height: number };

/**
 * Where a tree frame lands in the screenshot, in pixels: frame × scale; for a letterboxed app,
 * AXe's letterbox mapping first (physical = offset + logical × k, with k = min(pw/lw, ph/lh) and
 * the offsets centring the UI, `OrientationAwareCoordinates.swift`); for a rotated screenshot,
 * the portrait picture turned a quarter clockwise.
 */
export function pixelRect(device: SimDevice, f: Rect): Rect {
  const { width: pw, height: ph, scale: s } = device.screen;
  let r = f;
  if (frontLayout(device)?.kind === "letterbox") {
    const [lw, lh] = [ph, pw];
    const k = Math.min(pw / lw, ph / lh);
    const [ox, oy] = [(pw - lw * k) / 2, (ph - lh * k) / 2];
    r = { x: ox + f.x * k, y: oy + f.y * k, width: f.width * k, height: f.height * k };
  }
  const px = { x: r.x * s, y: r.y * s, width: r.width * s, height: r.height * s };
  return device.screenshotRotated
    ? { x: ph * s - (px.y + px.height), y: px.x, width: px.height, height: px.width }
    : px;
}

function boxFor(n: SimNode, c: Colours, device: SimDevice): Box | null {
  const rect = pixelRect(device, n.frame);
  const text = n.kind === "textField" || n.kind === "secureTextField" ? (n.value ?? "") : (n.label ?? "");
  const withText = (b: Box) => (text ? { ...b, text } : b);
  switch (n.kind) {
    case "application":
    case "group":
      return null;
    case "tabBar":
      return { ...rect, fill: c.bar };
    case "text":
      return withText({ ...rect, fill: c.background, textColor: c.text });
    case "textField":
    case "secureTextField":
      return withText({ ...rect, fill: c.field, border: n.focused ? c.focus : c.fieldBorder, textColor: c.text });
    case "switch":
      return withText({ ...rect, fill: n.selected ? c.on : c.off, textColor: c.text });
    case "tab":
      return withText({ ...rect, fill: c.bar, textColor: n.selected ? c.selected : c.disabledText });
    default:
      return withText(
        n.enabled
          ? { ...rect, fill: c.button, textColor: c.buttonText }
          : { ...rect, fill: c.disabled, textColor: c.disabledText },
      );
  }
}

export function pixelSize(device: SimDevice): { width: number; height: number } {
  const portrait = {
    width: Math.round(device.screen.width * device.screen.scale),
    height: Math.round(device.screen.height * device.screen.scale),
  };
  return device.screenshotRotated ? { width: portrait.height, height: portrait.width } : portrait;
}

export function backgroundOf(device: SimDevice): Rgb {
  return device.locked ? PALETTE[device.appearance].locked : PALETTE[device.appearance].background;
}

export function screenshotPng(device: SimDevice): Uint8Array {
  const { width, height } = pixelSize(device);
  const colours = PALETTE[device.appearance];
  const boxes: Box[] = [];
  if (!device.locked) {
    for (const { node } of walk(screenTree(device))) {
      const box = boxFor(node, colours, device);
      if (box) boxes.push(box);
    }
  }
  return renderPng(width, height, backgroundOf(device), boxes);
}

// ---- a one-colour baseline JPEG ----

class BitWriter {
  private readonly bytes: number[] = [];
  private acc = 0;
  private n = 0;
  write(bits: number, count: number): void {
    for (let i = count - 1; i >= 0; i--) {
      this.acc = (this.acc << 1) | ((bits >> i) & 1);
      if (++this.n === 8) this.flushByte();
    }
  }
  private flushByte(): void {
    this.bytes.push(this.acc);
    if (this.acc === 0xff) this.bytes.push(0x00);
    this.acc = 0;
    this.n = 0;
  }
  finish(): number[] {
    if (this.n > 0) this.write(0xff, 8 - this.n);
    return this.bytes;
  }
}

const segment = (marker: number, body: number[]) => [
  0xff,
  marker,
  (body.length + 2) >> 8,
  (body.length + 2) & 0xff,
  ...body,
];

/** Grey-level baseline JPEG of width×height: every 8×8 block has the same DC and no AC energy. */
export function flatJpeg(width: number, height: number, grey: number): Uint8Array {
  const dc = 8 * (Math.max(0, Math.min(255, Math.round(grey))) - 128);
  const category = dc === 0 ? 0 : Math.floor(Math.log2(Math.abs(dc))) + 1;
  // DC table: category 0 (and the first block's category) only; AC table: EOB only.
  const dcTable = category === 0 ? { bits: [1], vals: [0] } : { bits: [0, 2], vals: [0, category] };
  const dht = (cls: number, t: { bits: number[]; vals: number[] }) =>
    segment(0xc4, [cls, ...Array.from({ length: 16 }, (_, i) => t.bits[i] ?? 0), ...t.vals]);
  const bw = new BitWriter();
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  for (let b = 0; b < blocks; b++) {
    if (b === 0 && category > 0) {
      bw.write(0b01, 2);
      bw.write(dc > 0 ? dc : dc + (1 << category) - 1, category);
    } else if (category > 0) bw.write(0b00, 2);
    else bw.write(0, 1);
    bw.write(0, 1); // EOB
  }
  const out = [
    0xff,
    0xd8,
    ...segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]),
    ...segment(0xdb, [0x00, ...new Array(64).fill(1)]),
    ...segment(0xc0, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]),
    ...dht(0x00, dcTable),
    ...dht(0x10, { bits: [1], vals: [0] }),
    ...segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    ...bw.finish(),
    0xff,
    0xd9,
  ];
  return Uint8Array.from(out);
}

export function screenshotJpeg(device: SimDevice): Uint8Array {
  const { width, height } = pixelSize(device);
  const [r, g, b] = backgroundOf(device);
  return flatJpeg(width, height, 0.299 * r + 0.587 * g + 0.114 * b);
}
