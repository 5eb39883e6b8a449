/**
 * The fake `axe` executable (AXe 1.8 command set): argument errors as ArgumentParser prints them
 * (exit 64), runtime errors as `Error: <message>` (exit 1), success output only from tap,
 * describe-ui, screenshot and batch, as in AXe's sources.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { frontPid, screenTree } from "./apps.ts";
import {
  axeCommands,
  type CommandSpec,
  olderThan,
  type Parsed,
  parseArgs,
  parseIntList,
  UsageError,
} from "./axe-args.ts";
import { button, enterText, key, keyCombo, swipe, tapAt } from "./axe-actions.ts";
import { appleJson } from "./apple-json.ts";
import { axeElement, describeUi, emptyDescribeUi } from "./axe-json.ts";
import { validateAxe } from "./axe-validate.ts";
import { type CliContext, runCli } from "./fake-cli.ts";
import { ResolutionError, resolveTap } from "./axe-resolve.ts";
import { screenshotPng } from "./screenshot.ts";
import { readState, type SimDevice, type SimState, transact } from "./sim-state.ts";
import { hitTest } from "./ui-tree.ts";
import { axTreeEmpty } from "./lifecycle.ts";
import { NO_TRANSLATION, axeCannotDrive } from "./xcode.ts";

const swiftDouble = (n: number) => (Number.isInteger(n) ? n.toFixed(1) : String(n));
const notFound = (udid: string) =>
  `No simulator with UDID ${udid} was found. Run \`axe list-simulators\` to see available simulators.`;
const notBooted = (udid: string, state: string) => `Simulator ${udid} is not booted. Current state: ${state}.`;

/** A runtime failure: AXe prints `Error: <message>` and exits 1. */
class AxeError extends Error {}

function fail(message: string): never {
  throw new AxeError(message);
}

/** Finds the simulator, applies faults, then runs `fn` under the state lock (AXe's HID session needs a booted device). */
async function withDevice<T>(
  ctx: CliContext,
  command: string,
  udid: string,
  fn: (d: SimDevice, s: SimState) => T,
): Promise<T> {
  const s0 = readState(ctx.dir);
  // AXe loads the selected Xcode's simulator frameworks before it looks for the device (xcode.ts).
  const unusable = axeCannotDrive(s0.axeVersion, s0.xcode, command);
  if (unusable) fail(unusable);
  const d0 = s0.devices.find((d) => d.udid === udid);
  if (!d0) fail(notFound(udid));
  if (d0.state !== "Booted") fail(notBooted(udid, d0.state));
  await ctx.faults(command, udid, () => ({ stderr: `Error: ${notBooted(udid, "Shutdown")}\n`, exitCode: 1 }));
  return transact(ctx.dir, (s) => {
    const d = s.devices.find((x) => x.udid === udid) as SimDevice;
    if (d.state !== "Booted") fail(notBooted(udid, d.state));
    return fn(d, s);
  });
}

const sleepS = (s: number | undefined) => (s ? new Promise((r) => setTimeout(r, s * 1000)) : Promise.resolve());
/** Real AXe reads the whole frontmost tree before a coordinate tap, touch or swipe (sim-state axeTapTreeReadMs). */
const treeRead = (ctx: CliContext) => sleepS((readState(ctx.dir).axeTapTreeReadMs ?? 0) / 1000);
const n = (p: Parsed, k: string) => p[k] as number | undefined;

/** US-keyboard characters of AXe's KeyEvent table; anything else has no HID keycode. */
const TYPEABLE = /^[a-zA-Z0-9\n !"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]$/;

function graphemes(text: string): string[] {
  return [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text)].map((s) => s.segment);
}

/**
 * AXe `Type.swift` `readFromStdin()` (l.148-157): `readLine()` until EOF, lines joined with "\n"
 * but none before the first, so a trailing newline is lost, leading empty lines too, and input
 * that is only "\n" types nothing. readLine strips "\n" and "\r\n".
 */
function readFromStdin(raw: string): string {
  const lines = raw.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  let input = "";
  for (const l of lines) {
    if (input !== "") input += "\n";
    input += l.endsWith("\r") ? l.slice(0, -1) : l;
  }
  return input;
}

/**
 * iOS Smart Punctuation on the hardware-keyboard path (sim-state typingSmartPunctuation): AXe's own
 * `type` help warns "iOS may apply smart punctuation"; the substitutions are iOS's Smart
 * Punctuation (Settings › General › Keyboard): "--" becomes an em dash, straight quotes curly.
 */
function smartPunctuation(text: string): string {
  return text
    .replaceAll("--", "\u2014")
    .replace(/(^|[\s(])'/g, "$1\u2018")
    .replaceAll("'", "\u2019")
    .replace(/(^|[\s(])"/g, "$1\u201c")
    .replaceAll('"', "\u201d");
}

async function typeCommand(ctx: CliContext, p: Parsed): Promise<number> {
  let text: string;
  if (p.stdin) text = readFromStdin(await ctx.stdin());
  else if (p.file) text = await Bun.file(p.file as string).text();
  else text = p.text as string;
  const bad = graphemes(text).find((g) => !TYPEABLE.test(g));
  if (bad !== undefined) fail(`No keycode found for character: '${bad}'`);
  return withDevice(ctx, "type", p.udid as string, (d, s) => {
    enterText(d, s.typingSmartPunctuation ? smartPunctuation(text) : text, "axe");
    return 0;
  });
}

async function tapCommand(ctx: CliContext, p: Parsed): Promise<number> {
  const udid = p.udid as string;
  let point: { x: number; y: number };
  let described: string;
  // Tap.swift resolvedTapStyle: automatic is physical only for a switch-like target of a selector
  // tap (a coordinate tap is never switch-like, Tap.swift:109); before 1.7.0 always simulator.
  let switchLike = false;
  if (p.x !== undefined && p.y !== undefined) {
    point = { x: p.x as number, y: p.y as number };
    described = `(${swiftDouble(point.x)}, ${swiftDouble(point.y)})`;
    await treeRead(ctx);
  } else {
    const q =
      p.id !== undefined
        ? { kind: "--id" as const, value: p.id as string }
        : p.label !== undefined
          ? { kind: "--label" as const, value: p.label as string }
          : { kind: "--value" as const, value: p.value as string };
    const deadline = Date.now() + (n(p, "wait-timeout") ?? 0) * 1000;
    for (;;) {
      const d = readState(ctx.dir).devices.find((x) => x.udid === udid);
      if (!d) fail(notFound(udid));
      try {
        const hit = resolveTap(screenTree(d), q, p["element-type"] as string | undefined);
        point = { x: hit.x, y: hit.y };
        switchLike = hit.switchLike && !olderThan(readState(ctx.dir).axeVersion, [1, 7, 0]);
        break;
      } catch (e) {
        if (!(e instanceof ResolutionError)) throw e;
        if (Date.now() < deadline) {
          await sleepS(n(p, "poll-interval") ?? 0.25);
          continue;
        }
        ctx.err(`Warning: ${e.message} No tap performed.\n`);
        fail(e.message);
      }
    }
    described = `resolved tap point at (${swiftDouble(point.x)}, ${swiftDouble(point.y)})`;
  }
  await sleepS(n(p, "pre-delay"));
  const style =
    ((p["tap-style"] as string | undefined) ?? "automatic") === "automatic"
      ? switchLike
        ? "physical"
        : "simulator"
      : (p["tap-style"] as "simulator" | "physical");
  await withDevice(ctx, "tap", udid, (d, s) => tapAt(s, d, point.x, point.y, "axe", "tap", null, style));
  await sleepS(n(p, "post-delay"));
  ctx.out(`✓ Tap at ${described} completed successfully\n`);
  return 0;
}

async function describeCommand(ctx: CliContext, p: Parsed): Promise<number> {
  const udid = p.udid as string;
  const doc = await withDevice(ctx, "describe-ui", udid, (d) => {
    // A wedged CoreSimulatorBridge (xcode.ts NO_TRANSLATION, XcodeBuildMCP #458).
    if (d.noTranslation) fail(NO_TRANSLATION);
    const pid = frontPid(d);
    if (d.emptyTreeReads > 0) {
      d.emptyTreeReads--;
      return emptyDescribeUi(pid);
    }
    if (axTreeEmpty(d, pid)) return emptyDescribeUi(pid);
    const root = screenTree(d);
    if (p.point === undefined) return describeUi(root, pid);
    const [x, y] = String(p.point)
      .split(",")
      .map((v) => Number(v.trim())) as [number, number];
    const path = hitTest(root, x, y);
    return appleJson([axeElement(path[path.length - 1] ?? root, pid)]);
  });
  ctx.out(`${doc}\n`);
  return 0;
}

function gesturePoints(p: Parsed): { from: { x: number; y: number }; to: { x: number; y: number }; duration: number } {
  const w = n(p, "screen-width") ?? 390;
  const h = n(p, "screen-height") ?? 844;
  const [cx, cy, m, d] = [w / 2, h / 2, 20, 100];
  const preset = p.preset as string;
  const table: Record<string, [number, number, number, number]> = {
    "scroll-up": [cx, cy + d, cx, cy - d],
    "scroll-down": [cx, cy - d, cx, cy + d],
    "scroll-left": [cx + d, cy, cx - d, cy],
    "scroll-right": [cx - d, cy, cx + d, cy],
    "swipe-from-left-edge": [m, cy, w - m, cy],
    "swipe-from-right-edge": [w - m, cy, m, cy],
    "swipe-from-top-edge": [cx, m, cx, h - m],
    "swipe-from-bottom-edge": [cx, h - m, cx, m],
  };
  const [x1, y1, x2, y2] = table[preset] as [number, number, number, number];
  return {
    from: { x: x1, y: y1 },
    to: { x: x2, y: y2 },
    duration: n(p, "duration") ?? (preset.startsWith("scroll") ? 0.5 : 0.3),
  };
}

type Runner = (ctx: CliContext, p: Parsed, spec: CommandSpec) => Promise<number>;

const RUN: Record<string, Runner> = {
  "describe-ui": describeCommand,
  tap: tapCommand,
  type: typeCommand,
  async swipe(ctx, p) {
    await treeRead(ctx);
    await sleepS(n(p, "pre-delay"));
    await withDevice(ctx, "swipe", p.udid as string, (d) =>
      swipe(
        d,
        { x: p["start-x"] as number, y: p["start-y"] as number },
        { x: p["end-x"] as number, y: p["end-y"] as number },
        n(p, "duration") ?? null,
        "axe",
      ),
    );
    await sleepS(n(p, "post-delay"));
    return 0;
  },
  async gesture(ctx, p) {
    const g = gesturePoints(p);
    await withDevice(ctx, "gesture", p.udid as string, (d) => swipe(d, g.from, g.to, g.duration, "axe"));
    return 0;
  },
  async touch(ctx, p) {
    await treeRead(ctx);
    const delay = n(p, "delay") ?? 0;
    await withDevice(ctx, "touch", p.udid as string, (d, s) => {
      if (p.down && p.up)
        tapAt(
          s,
          d,
          p.x as number,
          p.y as number,
          "axe",
          delay >= 0.5 ? "long-press" : "tap",
          delay >= 0.5 ? delay : null,
        );
      else
        d.input.push({
          via: "axe",
          kind: "touch",
          x: p.x as number,
          y: p.y as number,
          text: p.down ? "down" : "up",
          target: null,
        });
    });
    return 0;
  },
  async key(ctx, p) {
    await withDevice(ctx, "key", p.udid as string, (d) => key(d, p.keycode as number, n(p, "duration") ?? null, "axe"));
    return 0;
  },
  async "key-sequence"(ctx, p, spec) {
    const codes = parseIntList(spec, p.keycodes as string, "keycodes");
    await withDevice(ctx, "key-sequence", p.udid as string, (d) => codes.forEach((c) => key(d, c, null, "axe")));
    return 0;
  },
  async "key-combo"(ctx, p, spec) {
    const mods = parseIntList(spec, p.modifiers as string, "modifier keycodes");
    await withDevice(ctx, "key-combo", p.udid as string, (d) => keyCombo(d, mods, p.key as number, "axe"));
    return 0;
  },
  async button(ctx, p) {
    await withDevice(ctx, "button", p.udid as string, (d) =>
      button(d, p["button-type"] as string, n(p, "duration") ?? null, "axe"),
    );
    return 0;
  },
  async screenshot(ctx, p) {
    const udid = (p.udid as string).trim();
    const d0 = readState(ctx.dir).devices.find((d) => d.udid === udid);
    if (!d0) fail(`Simulator with UDID ${udid} not found.`);
    if (d0.state !== "Booted") fail(`Simulator ${udid} is not booted. Current state: ${d0.state}`);
    await ctx.faults("screenshot", udid, () => ({
      stderr: `Error: Simulator ${udid} is not booted. Current state: Shutdown\n`,
      exitCode: 1,
    }));
    const stamp = new Date().toISOString().replace(/[:T]/g, ".").slice(0, 19);
    const path = resolve(
      (p.output as string | undefined)?.trim() || `Simulator Screenshot - ${d0.name} - ${stamp}.png`,
    );
    writeFileSync(path, screenshotPng(readState(ctx.dir).devices.find((d) => d.udid === udid) as SimDevice));
    ctx.err(`Screenshot saved to ${path}\n`);
    ctx.out(`${path}\n`);
    return 0;
  },
  async batch(ctx, p) {
    const lines = p.stdin
      ? (await ctx.stdin()).split("\n")
      : p.file
        ? (await Bun.file(p.file as string).text()).split("\n")
        : ((p.step as string[] | undefined) ?? []);
    const steps = lines.map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
    if (steps.length === 0) throw new UsageError("No executable steps found.", null, null, "axe <subcommand>");
    const failures: string[] = [];
    for (const [i, line] of steps.entries()) {
      const tokens = line.match(/"[^"]*"|'[^']*'|\S+/g)?.map((t) => t.replace(/^(["'])(.*)\1$/, "$2")) ?? [];
      const [name, ...rest] = tokens as [string, ...string[]];
      if (name === "sleep") {
        await sleepS(Number(rest[0]));
        continue;
      }
      const spec = axeCommands(readState(ctx.dir).axeVersion).get(name);
      if (!spec || name === "batch" || name === "describe-ui" || name === "screenshot")
        throw new UsageError(
          `Unsupported batch step '${name}'.`,
          null,
          "batch",
          (axeCommands(readState(ctx.dir).axeVersion).get("batch") as CommandSpec).usage,
        );
      const parsed = parseArgs(spec, [...rest, "--udid", p.udid as string]);
      validateAxe(spec, parsed);
      try {
        await (RUN[name] as Runner)({ ...ctx, out: () => undefined }, parsed, spec);
      } catch (e) {
        if (!(e instanceof AxeError)) throw e;
        if (!p["continue-on-error"]) fail(`Step ${i + 1} failed: [${name}]\n${e.message}`);
        failures.push(`Step ${i + 1} [${name}]: ${e.message}`);
      }
    }
    if (failures.length > 0) fail(`Batch completed with ${failures.length} failure(s):\n${failures.join("\n")}`);
    ctx.out(`✓ Batch completed successfully (${steps.length} steps)\n`);
    return 0;
  },
};

await runCli("axe", async (ctx) => {
  const [sub, ...rest] = ctx.argv;
  if (sub === "--version" || (sub && rest.includes("--version"))) {
    ctx.out(`${readState(ctx.dir).axeVersion}\n`);
    return 0;
  }
  const spec = sub ? axeCommands(readState(ctx.dir).axeVersion).get(sub) : undefined;
  if (!spec) {
    if (
      sub === "list-simulators" ||
      sub === "init" ||
      sub === "slider" ||
      sub === "drag" ||
      sub === "record-video" ||
      sub === "stream-video" ||
      sub === "--help" ||
      sub === "-h" ||
      sub === "help"
    ) {
      ctx.err(`fake axe: ${sub} is not modelled\n`);
      return 1;
    }
    ctx.err(
      sub
        ? `Error: Unexpected argument '${sub}'\nUsage: axe <subcommand>\n  See 'axe --help' for more information.\n`
        : "fake axe: no subcommand\n",
    );
    return 64;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    ctx.err(`fake axe: ${sub} --help is not modelled\n`);
    return 1;
  }
  try {
    const parsed = parseArgs(spec, rest);
    validateAxe(spec, parsed);
    return await (RUN[spec.name] as Runner)(ctx, parsed, spec);
  } catch (e) {
    if (e instanceof UsageError) {
      ctx.err(e.render());
      return 64;
    }
    if (e instanceof AxeError) {
      ctx.err(`Error: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
});
