/** The `validate()` checks of AXe's commands, with their messages (exit 64 through UsageError). */
import { type CommandSpec, type Parsed, validationError } from "./axe-args.ts";

const delays = (spec: CommandSpec, p: Parsed) => {
  for (const [k, label] of [
    ["pre-delay", "Pre-delay"],
    ["post-delay", "Post-delay"],
  ] as const) {
    const v = p[k] as number | undefined;
    if (v !== undefined && (v < 0 || v > 10)) throw validationError(spec, `${label} must be between 0 and 10 seconds.`);
  }
};

function point(spec: CommandSpec, raw: string): void {
  const parts = raw.split(",").map((s) => s.trim());
  const ok = parts.length === 2 && parts.every((s) => s !== "" && Number.isFinite(Number(s)) && Number(s) >= 0);
  if (!ok) throw validationError(spec, "--point must be in the form x,y using non-negative numbers.");
}

const CHECKS: Record<string, (spec: CommandSpec, p: Parsed) => void> = {
  "describe-ui": (spec, p) => {
    if (p.point !== undefined) point(spec, p.point as string);
  },
  tap: (spec, p) => {
    if (p.x !== undefined || p.y !== undefined) {
      if (p.x === undefined || p.y === undefined)
        throw validationError(spec, "Both -x and -y must be provided together.");
      if ((p.x as number) < 0 || (p.y as number) < 0)
        throw validationError(spec, "Coordinates must be non-negative values.");
    } else {
      const selectors = ["id", "label", "value"].filter((k) => p[k] !== undefined);
      if (selectors.length === 0)
        throw validationError(spec, "Either provide both -x/-y, or use --id/--label/--value to tap an element.");
      if (selectors.length > 1) throw validationError(spec, "Use only one of --id, --label, or --value.");
      const k = selectors[0] as string;
      if (String(p[k]).trim() === "") throw validationError(spec, `--${k} must not be empty.`);
    }
    delays(spec, p);
    if (((p["wait-timeout"] as number | undefined) ?? 0) < 0)
      throw validationError(spec, "--wait-timeout must be non-negative.");
    if (
      ((p["wait-timeout"] as number | undefined) ?? 0) > 0 &&
      ((p["poll-interval"] as number | undefined) ?? 0.25) <= 0
    ) {
      throw validationError(spec, "--poll-interval must be greater than 0 when --wait-timeout is active.");
    }
  },
  type: (spec, p) => {
    const sources = [p.text !== undefined, p.stdin === true, p.file !== undefined].filter(Boolean).length;
    if (sources > 1)
      throw validationError(spec, "Please specify only one input source: text argument, --stdin, or --file.");
    if (sources === 0)
      throw validationError(spec, "No input provided. Provide text as argument, or use --stdin, or --file.");
  },
  swipe: (spec, p) => {
    const [x1, y1, x2, y2] = ["start-x", "start-y", "end-x", "end-y"].map((k) => p[k] as number) as [
      number,
      number,
      number,
      number,
    ];
    if (x1 < 0 || y1 < 0 || x2 < 0 || y2 < 0) throw validationError(spec, "Coordinates must be non-negative values.");
    if (p.duration !== undefined && (p.duration as number) <= 0)
      throw validationError(spec, "Duration must be greater than 0.");
    if (p.delta !== undefined && (p.delta as number) <= 0) throw validationError(spec, "Delta must be greater than 0.");
    if (x1 === x2 && y1 === y2) throw validationError(spec, "Start and end points must be different.");
    delays(spec, p);
  },
  touch: (spec, p) => {
    if ((p.x as number) < 0 || (p.y as number) < 0)
      throw validationError(spec, "Coordinates must be non-negative values.");
    if (!p.down && !p.up) throw validationError(spec, "At least one of --down or --up must be specified.");
    if (p.delay !== undefined) {
      if ((p.delay as number) < 0) throw validationError(spec, "Delay must be non-negative.");
      if ((p.delay as number) > 10) throw validationError(spec, "Delay must not exceed 10 seconds.");
      if (!(p.down && p.up))
        throw validationError(spec, "Delay can only be used when both --down and --up are specified.");
    }
  },
  key: (spec, p) => {
    const k = p.keycode as number;
    if (k < 0 || k > 255) throw validationError(spec, "Keycode must be between 0 and 255.");
    if (p.duration !== undefined && (p.duration as number) <= 0)
      throw validationError(spec, "Duration must be greater than 0.");
    if (p.duration !== undefined && (p.duration as number) > 10)
      throw validationError(spec, "Duration must not exceed 10 seconds.");
  },
  "key-sequence": (spec, p) => {
    const tokens = String(p.keycodes)
      .split(",")
      .map((t) => t.trim());
    const bad = tokens.filter((t) => !/^[+-]?\d+$/.test(t));
    if (bad.length > 0)
      throw validationError(spec, `All keycodes must be valid integers. Invalid token(s): ${bad.join(", ")}`);
    const codes = tokens.map(Number);
    const out = codes.find((c) => c < 0 || c > 255);
    if (out !== undefined)
      throw validationError(spec, `All keycodes must be between 0 and 255. Invalid keycode: ${out}`);
    if (p.delay !== undefined && (p.delay as number) < 0) throw validationError(spec, "Delay must be non-negative.");
    if (p.delay !== undefined && (p.delay as number) > 5)
      throw validationError(spec, "Delay must not exceed 5 seconds.");
    if (codes.length > 100) throw validationError(spec, "Key sequence must not exceed 100 keys.");
  },
  "key-combo": (spec, p) => {
    const tokens = String(p.modifiers)
      .split(",")
      .map((t) => t.trim());
    const bad = tokens.filter((t) => !/^[+-]?\d+$/.test(t));
    if (bad.length > 0)
      throw validationError(spec, `All modifier keycodes must be valid integers. Invalid token(s): ${bad.join(", ")}`);
    if (tokens.length > 8) throw validationError(spec, "At most 8 modifier keycodes may be provided.");
    const out = tokens.map(Number).find((c) => c < 0 || c > 255);
    if (out !== undefined)
      throw validationError(spec, `All modifier keycodes must be between 0 and 255. Invalid keycode: ${out}`);
    if ((p.key as number) < 0 || (p.key as number) > 255) throw validationError(spec, "Key must be between 0 and 255.");
  },
  button: (spec, p) => {
    if (p.duration !== undefined && (p.duration as number) <= 0)
      throw validationError(spec, "Duration must be greater than 0.");
    if (p.duration !== undefined && (p.duration as number) > 10)
      throw validationError(spec, "Duration must not exceed 10 seconds.");
  },
  gesture: (spec, p) => {
    const range = (k: string, lo: number, hi: number, msg: string) => {
      const v = p[k] as number | undefined;
      if (v !== undefined && (v < lo || v > hi)) throw validationError(spec, msg);
    };
    range("screen-width", 1, 2000, "Screen width must be between 1 and 2000 points.");
    range("screen-height", 1, 3000, "Screen height must be between 1 and 3000 points.");
    range("duration", 0, 10, "Duration must be between 0 and 10 seconds.");
    range("delta", 1, 200, "Delta must be between 1 and 200 pixels.");
    delays(spec, p);
  },
  batch: (spec, p) => {
    const sources = [
      ((p.step as string[] | undefined) ?? []).length > 0,
      p.file !== undefined,
      p.stdin === true,
    ].filter(Boolean).length;
    if (sources !== 1) throw validationError(spec, "Specify exactly one step source: --step, --file, or --stdin.");
    if (p["type-chunk-size"] !== undefined && (p["type-chunk-size"] as number) <= 0)
      throw validationError(spec, "--type-chunk-size must be greater than 0.");
    if (((p["wait-timeout"] as number | undefined) ?? 0) < 0)
      throw validationError(spec, "--wait-timeout must be non-negative.");
  },
};

export function validateAxe(spec: CommandSpec, p: Parsed): void {
  CHECKS[spec.name]?.(spec, p);
}
