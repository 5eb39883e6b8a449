/**
 * AXe's command line as Swift ArgumentParser parses it, with the exact error texts of AXe's
 * captured goldens (fixtures/platform/ios/axe/cases): usage errors exit 64 with `Error:`,
 * optionally `Help:`, `Usage:` and a `See 'axe <cmd> --help'` line. A value that starts with `-`
 * is taken for an option (so `--duration -1` is a missing value, and `axe type -x` an unknown option).
 */

type ValueKind = "double" | "int" | "string" | "flag" | "enum";

export interface ParamSpec {
  /** `--udid`, `-x`, or `<keycode>` for a positional argument. */
  name: string;
  kind: ValueKind;
  help: string;
  required?: boolean;
  repeatable?: boolean;
  valueName?: string;
  choices?: string[];
  /** ArgumentParser lists many choices one per line. */
  listChoices?: boolean;
}

export interface CommandSpec {
  name: string;
  usage: string;
  params: ParamSpec[];
}

export type ParsedValue = string | number | boolean | string[];
export type Parsed = Record<string, ParsedValue | undefined>;

export class UsageError extends Error {
  constructor(
    message: string,
    readonly help: string | null,
    readonly command: string | null,
    readonly usage: string,
  ) {
    super(message);
  }

  /** The stderr text ArgumentParser prints. */
  render(): string {
    const see = this.command ? `axe ${this.command} --help` : "axe --help";
    return `Error: ${this.message}\n${this.help ? `Help:  ${this.help}\n` : ""}Usage: ${this.usage}\n  See '${see}' for more information.\n`;
  }
}

const isPositional = (p: ParamSpec) => p.name.startsWith("<");
const key = (p: ParamSpec) => p.name.replace(/^-+|[<>]/g, "");
const display = (p: ParamSpec) =>
  isPositional(p) ? p.name : p.kind === "flag" ? p.name : `${p.name} <${p.valueName ?? key(p)}>`;
const looksLikeOption = (t: string) => t.length > 1 && t.startsWith("-");

function quoteChoices(choices: string[]): string {
  const q = choices.map((c) => `'${c}'`);
  return q.length <= 2 ? q.join(" or ") : `${q.slice(0, -1).join(", ")} or ${q[q.length - 1]}`;
}

function convert(spec: CommandSpec, p: ParamSpec, raw: string): ParsedValue {
  const invalid = () => {
    let msg = `The value '${raw}' is invalid for '${display(p)}'`;
    if (p.choices)
      msg += p.listChoices
        ? `. Please provide one of the following:\n${p.choices.map((c) => `  - ${c}`).join("\n")}`
        : `. Please provide one of ${quoteChoices(p.choices)}.`;
    return new UsageError(msg, `${display(p)}  ${p.help}`, spec.name, spec.usage);
  };
  if (p.kind === "double") {
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n)) throw invalid();
    return n;
  }
  if (p.kind === "int") {
    if (!/^[+-]?\d+$/.test(raw)) throw invalid();
    return Number(raw);
  }
  if (p.kind === "enum" && !p.choices?.includes(raw)) throw invalid();
  return raw;
}

export function parseArgs(spec: CommandSpec, tokens: readonly string[]): Parsed {
  const byName = new Map(spec.params.filter((p) => !isPositional(p)).map((p) => [p.name, p]));
  const raw = new Map<ParamSpec, string[]>();
  const positionals: string[] = [];
  const unknown: string[] = [];
  const flags = new Set<ParamSpec>();
  let onlyPositional = false;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (onlyPositional || !looksLikeOption(t)) {
      positionals.push(t);
      continue;
    }
    if (t === "--") {
      onlyPositional = true;
      continue;
    }
    const eq = t.startsWith("--") ? t.indexOf("=") : -1;
    const name = eq > 0 ? t.slice(0, eq) : t;
    const p = byName.get(name);
    if (!p) {
      unknown.push(t);
      continue;
    }
    if (p.kind === "flag") {
      flags.add(p);
      continue;
    }
    let value: string | undefined;
    if (eq > 0) value = t.slice(eq + 1);
    else if (i + 1 < tokens.length && !looksLikeOption(tokens[i + 1] as string)) value = tokens[++i];
    if (value === undefined)
      throw new UsageError(`Missing value for '${display(p)}'`, `${display(p)}  ${p.help}`, spec.name, spec.usage);
    raw.set(p, [...(raw.get(p) ?? []), value]);
  }

  const out: Parsed = {};
  const args = spec.params.filter(isPositional);
  for (const p of spec.params) {
    if (p.kind === "flag") {
      out[key(p)] = flags.has(p);
      continue;
    }
    const values = isPositional(p)
      ? args.indexOf(p) < positionals.length
        ? [positionals[args.indexOf(p)] as string]
        : []
      : (raw.get(p) ?? []);
    if (values.length === 0) {
      if (p.required)
        throw new UsageError(
          `Missing expected argument '${display(p)}'`,
          `${display(p)}  ${p.help}`,
          spec.name,
          spec.usage,
        );
      continue;
    }
    out[key(p)] = p.repeatable
      ? values.map((v) => String(convert(spec, p, v)))
      : convert(spec, p, values[values.length - 1] as string);
  }
  if (unknown.length > 0) throw new UsageError(`Unknown option '${unknown[0]}'`, null, spec.name, spec.usage);
  if (positionals.length > args.length)
    throw new UsageError(`Unexpected argument '${positionals[args.length]}'`, null, spec.name, spec.usage);
  return out;
}

/** A `validate()` failure: `Error:` and the usage, no `Help:` line. */
export const validationError = (spec: CommandSpec, message: string) =>
  new UsageError(message, null, spec.name, spec.usage);

const udid: ParamSpec = { name: "--udid", kind: "string", help: "The UDID of the simulator.", required: true };
const num = (name: string, help: string, required = false): ParamSpec => ({ name, kind: "double", help, required });
const str = (name: string, help: string, extra: Partial<ParamSpec> = {}): ParamSpec => ({
  name,
  kind: "string",
  help,
  ...extra,
});
const flag = (name: string, help: string): ParamSpec => ({ name, kind: "flag", help });
const PRE = num("--pre-delay", "Delay before tapping in seconds.");
const POST = num("--post-delay", "Delay after tapping in seconds.");

export const GESTURE_PRESETS = [
  "scroll-up",
  "scroll-down",
  "scroll-left",
  "scroll-right",
  "swipe-from-left-edge",
  "swipe-from-right-edge",
  "swipe-from-top-edge",
  "swipe-from-bottom-edge",
];
export const BUTTONS = ["apple-pay", "home", "lock", "side-button", "siri"];

const specs: CommandSpec[] = [
  {
    name: "describe-ui",
    usage: "axe describe-ui --udid <udid> [--point <x,y>]",
    params: [
      udid,
      str("--point", "Describe only the accessibility element at screen coordinates x,y.", { valueName: "x,y" }),
    ],
  },
  {
    name: "tap",
    usage:
      "axe tap [-x <x>] [-y <y>] [--id <id>] [--label <label>] [--value <value>] [--element-type <element-type>] [--pre-delay <pre-delay>] [--post-delay <post-delay>] [--tap-style <tap-style>] [--wait-timeout <wait-timeout>] [--poll-interval <poll-interval>] --udid <udid>",
    params: [
      num("-x", "The X coordinate of the point to tap."),
      num("-y", "The Y coordinate of the point to tap."),
      str(
        "--id",
        "Tap the activation point of the element matching AXUniqueId (accessibilityIdentifier). Ignored if -x and -y are provided.",
      ),
      str(
        "--label",
        "Tap the activation point of the element matching AXLabel (accessibilityLabel). Ignored if -x and -y are provided.",
      ),
      str(
        "--value",
        "Tap the activation point of the element matching AXValue (the current value of a control). Ignored if -x and -y are provided.",
      ),
      str(
        "--element-type",
        "Filter matches to elements of this accessibility type (e.g. Button, TextField, Switch). Narrows --id/--label/--value results when multiple elements match.",
      ),
      PRE,
      POST,
      {
        name: "--tap-style",
        kind: "enum",
        choices: ["automatic", "simulator", "physical"],
        help: "Tap event style: automatic uses physical touch for switches/toggles and simulator tap for other targets; simulator always uses FBSimulator tapAt; physical uses touch down/up.",
      },
      num(
        "--wait-timeout",
        "Maximum seconds to poll for the element before failing (0 = no waiting, default). Only applies to --id/--label/--value targeting.",
      ),
      num("--poll-interval", "Seconds between accessibility tree polls when --wait-timeout is active (default: 0.25)."),
      udid,
    ],
  },
  {
    name: "type",
    usage: "axe type [<text>] [--stdin] [--file <file>] --udid <udid>",
    params: [
      str("<text>", "The text to type. Use quotes for text with spaces or special characters."),
      flag("--stdin", "Read text from standard input."),
      str("--file", "Read text from the specified file."),
      udid,
    ],
  },
  {
    name: "swipe",
    usage:
      "axe swipe --start-x <start-x> --start-y <start-y> --end-x <end-x> --end-y <end-y> [--duration <duration>] [--delta <delta>] [--pre-delay <pre-delay>] [--post-delay <post-delay>] --udid <udid>",
    params: [
      num("--start-x", "The X coordinate of the starting point.", true),
      num("--start-y", "The Y coordinate of the starting point.", true),
      num("--end-x", "The X coordinate of the ending point.", true),
      num("--end-y", "The Y coordinate of the ending point.", true),
      num("--duration", "Duration of the swipe in seconds."),
      num("--delta", "Distance between touch points in pixels."),
      { ...PRE, help: "Delay before starting the swipe in seconds." },
      { ...POST, help: "Delay after completing the swipe in seconds." },
      udid,
    ],
  },
  {
    name: "touch",
    usage: "axe touch -x <x> -y <y> [--down] [--up] [--delay <delay>] --udid <udid>",
    params: [
      num("-x", "The X coordinate of the touch point.", true),
      num("-y", "The Y coordinate of the touch point.", true),
      flag("--down", "Perform touch down event."),
      flag("--up", "Perform touch up event."),
      num("--delay", "Delay between touch down and up events in seconds (if both are specified)."),
      udid,
    ],
  },
  {
    name: "key",
    usage: "axe key <keycode> [--duration <duration>] --udid <udid>",
    params: [
      { name: "<keycode>", kind: "int", help: "The HID keycode to press (0-255).", required: true },
      num("--duration", "Duration to hold the key in seconds (optional)."),
      udid,
    ],
  },
  {
    name: "key-sequence",
    usage: "axe key-sequence --keycodes <keycodes> [--delay <delay>] --udid <udid>",
    params: [
      str("--keycodes", "Comma-separated list of HID keycodes to press in sequence.", { required: true }),
      num("--delay", "Delay between key presses in seconds (default: 0.1)."),
      udid,
    ],
  },
  {
    name: "key-combo",
    usage: "axe key-combo --modifiers <modifiers> --key <key> --udid <udid>",
    params: [
      str("--modifiers", "Comma-separated list of modifier keycodes to hold (0-255).", { required: true }),
      {
        name: "--key",
        kind: "int",
        help: "The HID keycode to press while modifiers are held (0-255).",
        required: true,
      },
      udid,
    ],
  },
  {
    name: "button",
    usage: "axe button <button-type> [--duration <duration>] --udid <udid>",
    params: [
      { name: "<button-type>", kind: "enum", choices: BUTTONS, help: "The button to press.", required: true },
      num("--duration", "Duration to hold the button in seconds (optional)."),
      udid,
    ],
  },
  {
    name: "gesture",
    usage:
      "axe gesture <preset> [--screen-width <screen-width>] [--screen-height <screen-height>] [--duration <duration>] [--delta <delta>] [--pre-delay <pre-delay>] [--post-delay <post-delay>] --udid <udid>",
    params: [
      {
        name: "<preset>",
        kind: "enum",
        choices: GESTURE_PRESETS,
        listChoices: true,
        help: "The gesture preset to perform.",
        required: true,
      },
      num("--screen-width", "Screen width in points (default: 390 for iPhone 15)."),
      num("--screen-height", "Screen height in points (default: 844 for iPhone 15)."),
      num("--duration", "Duration of the gesture in seconds (uses preset default if not specified)."),
      num("--delta", "Distance between touch points in pixels (uses preset default if not specified)."),
      { ...PRE, help: "Delay before starting the gesture in seconds." },
      { ...POST, help: "Delay after completing the gesture in seconds." },
      udid,
    ],
  },
  {
    name: "screenshot",
    usage: "axe screenshot --udid <udid> [--output <output>]",
    params: [
      udid,
      str(
        "--output",
        "Output PNG file path. Defaults to 'Simulator Screenshot - <device name> - <timestamp>.png' in the current directory.",
      ),
    ],
  },
  {
    name: "batch",
    usage:
      "axe batch --udid <udid> [--step <step> ...] [--file <file>] [--stdin] [--ax-cache <ax-cache>] [--type-submission <type-submission>] [--type-chunk-size <type-chunk-size>] [--tap-style <tap-style>] [--continue-on-error] [--wait-timeout <wait-timeout>] [--poll-interval <poll-interval>] [--verbose]",
    params: [
      udid,
      str("--step", "A step to run, e.g. 'tap -x 100 -y 200'.", { repeatable: true }),
      str("--file", "Read steps from a file, one per line."),
      flag("--stdin", "Read steps from standard input, one per line."),
      str("--ax-cache", "Accessibility cache policy."),
      str("--type-submission", "How text steps are submitted."),
      { name: "--type-chunk-size", kind: "int", help: "Characters per typed chunk." },
      { name: "--tap-style", kind: "enum", choices: ["automatic", "simulator", "physical"], help: "Tap event style." },
      flag("--continue-on-error", "Keep going after a failed step."),
      num("--wait-timeout", "Maximum seconds to poll for selector steps."),
      num("--poll-interval", "Seconds between accessibility tree polls."),
      flag("--verbose", "Print each step."),
    ],
  },
];

export const AXE_COMMANDS: ReadonlyMap<string, CommandSpec> = new Map(specs.map((s) => [s.name, s]));

/** True when `version` (`1.8.0`; dev builds such as `staging-main-…` count as newest) is older than `min`. */
export function olderThan(version: string, min: readonly [number, number, number]): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const v = [Number(m[1]), Number(m[2]), Number(m[3])];
  for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return (v[i] as number) < (min[i] as number);
  return false;
}

const TAP_STYLE_USAGE = " [--tap-style <tap-style>]";

/**
 * The command set of an AXe version. `--tap-style` on `tap` and `batch` arrived in 1.7.0 (AXe
 * CHANGELOG v1.7.0, PR #46); v1.6.0's `Tap.swift` and `Batch.swift` declare the same options
 * without it, so ArgumentParser rejects it there as an unknown option (exit 64).
 */
export function axeCommands(version: string): ReadonlyMap<string, CommandSpec> {
  if (!olderThan(version, [1, 7, 0])) return AXE_COMMANDS;
  const strip = (s: CommandSpec): CommandSpec => ({
    ...s,
    usage: s.usage.replace(TAP_STYLE_USAGE, ""),
    params: s.params.filter((p) => p.name !== "--tap-style"),
  });
  return new Map([...AXE_COMMANDS].map(([name, s]) => [name, name === "tap" || name === "batch" ? strip(s) : s]));
}

/** `parseCommaSeparatedIntsStrict` of AXe's KeySequence/KeyCombo. */
export function parseIntList(spec: CommandSpec, raw: string, what: "keycodes" | "modifier keycodes"): number[] {
  const tokens = raw.split(",").map((t) => t.trim());
  const bad = tokens.filter((t) => !/^[+-]?\d+$/.test(t));
  if (bad.length > 0)
    throw validationError(spec, `All ${what} must be valid integers. Invalid token(s): ${bad.join(", ")}`);
  return tokens.map(Number);
}
