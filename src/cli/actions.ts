/**
 * One-shot actions (`tap`, `swipe`, `type`, `key`, `launch`, `open-url`): each runs as one
 * device.execute inside its own Session, so it is recorded like any client's action.
 */
import { firstOffered, missing } from "../surfaces/interaction/index.ts";
import type { ActionDefinition, ActionResult } from "../protocol/types/action.ts";
import { type CoreClient, capabilities, execute, inSession, route, selectedDevice, withClient } from "./client.ts";
import { CliError, out, printJson } from "./output.ts";
import { stdout } from "./std-streams.ts";

/** What the user asked for: the device actions that do it, in order of preference. */
export interface ActionRequest {
  calls: { name: string; arguments: Record<string, unknown> }[];
  /** How the request reads in messages: `tap 540,935`. */
  label: string;
}

const one = (name: string, args: Record<string, unknown>, label: string): ActionRequest => ({
  calls: [{ name, arguments: args }],
  label,
});

export const tapRequest = (x: number, y: number) => one("tap", { x, y }, `tap ${x},${y}`);

export const swipeRequest = (x1: number, y1: number, x2: number, y2: number, durationMs: number) =>
  one(
    "swipe",
    { startX: x1, startY: y1, endX: x2, endY: y2, durationMs },
    `swipe ${x1},${y1} → ${x2},${y2} in ${durationMs} ms`,
  );

export const typeRequest = (text: string) => one("inputText", { text }, `type ${JSON.stringify(text)}`);

/** The label never holds the value: it is printed. */
export const secretRequest = (secret: string) => one("inputSecret", { secret }, "type a secret");

// Navigation "keys" are argument-less actions of their own on Android and the Mock; others are keyPress.
const NAVIGATION = new Set(["back", "home", "recentApps"]);
export const keyRequest = (key: string): ActionRequest => ({
  calls: [...(NAVIGATION.has(key) ? [{ name: key, arguments: {} }] : []), { name: "keyPress", arguments: { key } }],
  label: `key ${key}`,
});

/** `activity` names one launcher activity of an app that has several (Android). */
export const launchRequest = (packageName: string, activity?: string) =>
  activity === undefined
    ? one("launch", { packageName }, `launch ${packageName}`)
    : one("launch", { packageName, activity }, `launch ${packageName}/${activity}`);

export const openUrlRequest = (url: string) => one("openUrl", { url }, `open-url ${url}`);

/** The first call the device offers, or a clear error listing what it can do instead. */
export function pickAction(
  req: ActionRequest,
  offered: ActionDefinition[],
  deviceId: string,
): { name: string; arguments: unknown } {
  const names = offered.map((d) => d.name);
  const wanted = req.calls.map((c) => c.name);
  const name = firstOffered(names, wanted);
  const call = req.calls.find((c) => c.name === name);
  if (call) return call;
  throw new CliError(
    `device ${deviceId} has ${missing(wanted)} (needed for ${req.label}); its actions are: ${names.join(", ")}`,
  );
}

async function runAction(
  c: CoreClient,
  req: ActionRequest,
): Promise<{ deviceId: string; sessionId: string; name: string; result: ActionResult }> {
  const offered = await capabilities(c);
  const deviceId = await selectedDevice(c);
  const call = pickAction(req, offered, deviceId);
  return inSession(c, async (session) => ({
    deviceId,
    sessionId: session.id,
    name: call.name,
    result: await execute(c, call.name, call.arguments),
  }));
}

export async function actionCommand(
  req: ActionRequest,
  opts: { device?: string; json?: boolean; timeout?: number },
): Promise<number> {
  const done = await withClient(
    async (c) => {
      await route(c, opts.device);
      return runAction(c, req);
    },
    process.env,
    { timeoutMs: opts.timeout },
  );
  if (opts.json) {
    printJson(done.result);
    return 0;
  }
  const st = out();
  const r = done.result;
  const lines = [
    `${st.green("ok")} ${req.label} on ${done.deviceId} (${done.name}, ${r.finishedAtMs - r.startedAtMs} ms, session ${done.sessionId})`,
    `output: ${JSON.stringify(r.output)}`,
  ];
  if (r.after)
    lines.push(
      `after: observation ${r.after.id}${r.after.screenshot ? ` (screenshot sha256 ${r.after.screenshot.sha256})` : ""}`,
    );
  stdout.write(`${lines.join("\n")}\n`);
  return 0;
}
