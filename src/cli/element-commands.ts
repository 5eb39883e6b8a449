/**
 * Element commands: `tap --text …`, `type TEXT --into …`, `wait-for …` and `find …` run the
 * daemon's semantic actions (tapElement, waitForElement, findElement) on a selector made of
 * options or on a ref from `devicerail ui`, each inside one recorded Session like the other
 * one-shot commands. A selector that finds nothing, or too much, is answered with the closest
 * elements and what the device shows, read in the same Session right after the failure.
 */
import { selectorMatcher } from "../core/devices/semantic/index.ts";
import { onlyTappable, uiStatesOf } from "../surfaces/interaction/index.ts";
import { DEFAULT_WAIT_MS } from "../protocol/ui-geometry.ts";
import type { ActionResult } from "../protocol/types/action.ts";
import type { Observation } from "../protocol/types/observation.ts";
import type { ElementSelector, ElementTarget, UiNodeRef } from "../protocol/types/ui.ts";
import { actionCommand, pickAction, secretRequest, tapRequest, typeRequest } from "./actions.ts";
import { DEFAULT_TIMEOUT_MS } from "./arguments.ts";
import { capabilities, dataDirOf, execute, inSession, route, selectedDevice, withClient } from "./client.ts";
import { nodeLine } from "./device-commands.ts";
import { ElementFailure, type Run, diagnose, reported } from "./element-failure.ts";
import { RemoteError } from "../client/remote-error.ts";
import { CliError, out, printJson } from "./output.ts";
import { currentRef, loadListing, nodeRefOf } from "./refs.ts";
import { readSecret } from "./secret-input.ts";
import { ELEMENT_OPTIONS, type ElementOpts, type Wanted, selectorOf, usage, wantedFrom } from "./selector-options.ts";
import { stdout } from "./std-streams.ts";

export { type ElementOpts, type SelectorOpts, addSelectorOptions, wantedFrom } from "./selector-options.ts";
export { foregroundOf } from "./element-failure.ts";

/**
 * Routes (a ref without -d goes to the device it was listed on), checks that the device has the
 * actions, then runs `work` in a Session of its own.
 */
async function inElementSession<T>(
  wanted: Wanted,
  opts: ElementOpts,
  actions: string[],
  work: (run: Run) => Promise<T>,
  timeoutMs = opts.timeout,
): Promise<T> {
  const dataDir = dataDirOf(process.env);
  return withClient(
    async (c) => {
      const last = wanted.kind === "ref" && opts.device === undefined ? loadListing(dataDir, null) : null;
      if (wanted.kind === "ref" && opts.device === undefined && !last)
        throw new CliError(`no refs to use: run devicerail ui first (${wanted.ref} comes from its listing)`);
      await route(c, opts.device ?? last?.deviceId);
      const offered = await capabilities(c);
      const deviceId = await selectedDevice(c);
      for (const name of actions)
        pickAction({ calls: [{ name, arguments: {} }], label: wanted.label }, offered, deviceId);
      const listing = loadListing(dataDir, deviceId);
      let target: ElementTarget;
      if (wanted.kind === "selector") target = { kind: "selector", selector: wanted.selector };
      else if (!listing) throw new CliError(`no refs for ${deviceId}: run devicerail ui -d ${deviceId} first`);
      else target = { kind: "node", node: nodeRefOf(listing, wanted.ref) };
      return inSession(c, async (session) => work({ c, deviceId, sessionId: session.id, listing, target }));
    },
    process.env,
    { timeoutMs },
  );
}

/** The failures a selector can fix, each with what to try (the diagnosis shows the rest). */
const HINTS: Record<string, string | null> = {
  element_not_found: null,
  element_ambiguous: "add --role, --id or --name to tell them apart, or use --ref from devicerail ui",
  element_not_interactable: "it is disabled, cannot be tapped, or is off the screen",
};

/** Runs a semantic action, turning the failures a person can fix into words. */
async function attempt(run: Run, wanted: Wanted, call: () => Promise<ActionResult>): Promise<ActionResult> {
  try {
    return await call();
  } catch (e) {
    if (!(e instanceof RemoteError)) throw e;
    const code = e.data.code;
    if (wanted.kind === "ref" && (code === "element_stale" || code === "ui_context_changed"))
      throw new CliError("the screen changed since `devicerail ui`; run it again");
    if (!(code in HINTS)) throw e;
    const hint = HINTS[code] ? [HINTS[code]] : [];
    throw new ElementFailure(e.message, e, await diagnose(run, selectorOf(wanted)), [
      `${wanted.kind}: ${wanted.label}`,
      ...hint,
    ]);
  }
}

/**
 * tapElement on the command's target, with the disambiguation rule every surface applies
 * (src/surfaces/interaction/element-actions.ts): a selector several elements match, of which exactly one
 * can be tapped (a "Sign in" title above a "Sign in" button), taps that one through a node
 * reference into the diagnosis' observation; the Session still records the ambiguous attempt.
 */
async function tapTarget(run: Run, wanted: Wanted): Promise<{ result: ActionResult; note: string | null }> {
  try {
    return {
      result: await attempt(run, wanted, () => execute(run.c, "tapElement", { target: run.target })),
      note: null,
    };
  } catch (e) {
    const selector = selectorOf(wanted);
    const seen =
      e instanceof ElementFailure && e.rpc?.data.code === "element_ambiguous" ? e.diagnosis?.observed : undefined;
    const only =
      seen?.snapshot && selector
        ? onlyTappable(seen.snapshot, seen.observation.viewport, selectorMatcher(selector), wanted.label)
        : null;
    if (!only) throw e;
    const result = await attempt(run, wanted, () => execute(run.c, "tapElement", { target: only.target }));
    return { result, note: only.note };
  }
}

/** The node an element reference names, with its ref and states, for the command's output line. */
async function describe(run: Run, element: UiNodeRef, observations: (Observation | null)[]): Promise<string> {
  const snapshot = await run.c.call("ui.snapshot.get", { observationId: element.observationId });
  const node = snapshot.nodes.find((n) => n.stableNodeId === element.stableNodeId);
  if (!node) return element.stableNodeId;
  const states = uiStatesOf(observations.find((o) => o?.id === element.observationId)?.metadata)[node.stableNodeId];
  const ref = currentRef(run.listing, snapshot.context, node.stableNodeId);
  return `${ref ? `${ref} ` : ""}${nodeLine(node, states, out())}`;
}

const took = (first: ActionResult, last: ActionResult) => `${last.finishedAtMs - first.startedAtMs} ms`;
const afterLine = (r: ActionResult) =>
  r.after
    ? [
        `after: observation ${r.after.id}${r.after.screenshot ? ` (screenshot sha256 ${r.after.screenshot.sha256})` : ""}`,
      ]
    : [];
const print = (lines: string[]) => stdout.write(`${lines.join("\n")}\n`);

/** `tap X Y` as before, or `tap <selector>` → tapElement. */
export async function tapCommand(x: number | undefined, y: number | undefined, opts: ElementOpts): Promise<number> {
  const wanted = wantedFrom(opts);
  if (x !== undefined && wanted) throw usage(`give either X Y or an element (${ELEMENT_OPTIONS}), not both`);
  if (x !== undefined && y === undefined) throw usage("missing required argument 'y'");
  if (x !== undefined && y !== undefined) return actionCommand(tapRequest(x, y), opts);
  if (!wanted) throw usage(`tap needs X Y or an element: ${ELEMENT_OPTIONS}`);
  return reported(opts.json, async () => {
    const done = await inElementSession(wanted, opts, ["tapElement"], async (run) => {
      const { result, note } = await tapTarget(run, wanted);
      const element = (result.output as { element: UiNodeRef }).element;
      return { run, result, note, line: opts.json ? "" : await describe(run, element, [result.before]) };
    });
    if (opts.json) printJson(done.result);
    else
      print([
        `${out().green("ok")} tap ${wanted.label} on ${done.run.deviceId} (tapElement, ${took(done.result, done.result)}, session ${done.run.sessionId})`,
        `element: ${done.line}`,
        ...(done.note ? [`note: ${done.note}`] : []),
        ...afterLine(done.result),
      ]);
    return 0;
  });
}

/** `type TEXT` as before, or `type TEXT --into <selector>` → tapElement, then inputText, in one Session. */
export async function typeCommand(
  text: string | undefined,
  opts: ElementOpts & { into?: boolean; secret?: boolean },
): Promise<number> {
  const wanted = wantedFrom(opts);
  if (wanted && !opts.into) throw usage("an element to type into needs --into: devicerail type TEXT --into --id FIELD");
  if (opts.into && !wanted) throw usage(`--into needs the field: ${ELEMENT_OPTIONS}`);
  if (opts.secret && text !== undefined)
    throw usage(
      "--secret takes the text from stdin or a prompt, never from the command line (other users can read a command's arguments)",
    );
  if (!opts.secret && text === undefined)
    throw usage("missing the text to type: devicerail type TEXT (or --secret to read it from stdin)");
  // inputSecret is a protected action: its value is never recorded, logged or shown (see docs/protocol/devices-and-actions.md#protected-actions).
  const call = opts.secret
    ? { name: "inputSecret", arguments: { secret: await readSecret() }, what: "a secret" }
    : { name: "inputText", arguments: { text }, what: JSON.stringify(text) };
  if (!wanted)
    return actionCommand(
      opts.secret ? secretRequest(call.arguments.secret as string) : typeRequest(text as string),
      opts,
    );
  return reported(opts.json, async () => {
    const done = await inElementSession(wanted, opts, ["tapElement", call.name], async (run) => {
      const { result: tapped, note } = await tapTarget(run, wanted);
      const typed = await execute(run.c, call.name, call.arguments);
      const element = (tapped.output as { element: UiNodeRef }).element;
      return { run, tapped, typed, note, line: opts.json ? "" : await describe(run, element, [tapped.before]) };
    });
    if (opts.json) printJson({ tapElement: done.tapped, [call.name]: done.typed });
    else {
      const head = `${out().green("ok")} type ${call.what} into ${wanted.label} on ${done.run.deviceId}`;
      const note = done.note ? [`note: ${done.note}`] : [];
      print([
        `${head} (tapElement + ${call.name}, ${took(done.tapped, done.typed)}, session ${done.run.sessionId})`,
        `element: ${done.line}`,
        ...note,
        ...afterLine(done.typed),
      ]);
    }
    return 0;
  });
}

/**
 * `wait-for <selector> [--gone]` → waitForElement. Without --timeout the daemon's own wait (10 s)
 * applies and ends in `matched: false`; with it the action budget does and ends in
 * action_timed_out. Both are "not matched" here.
 */
export async function waitForCommand(opts: ElementOpts & { gone?: boolean }): Promise<number> {
  const wanted = wantedFrom(opts);
  if (!wanted) throw usage("wait-for needs an element: --text, --id, --role or --name");
  const selector = selectorOf(wanted) as ElementSelector;
  const waitMs = opts.timeout ?? DEFAULT_WAIT_MS;
  const condition = opts.gone ? "absent" : "present";
  const waited = waitMs % 1000 === 0 ? `${waitMs / 1000} s` : `${waitMs} ms`;
  const notMatched = opts.gone
    ? `${wanted.label} was still there after ${waited}`
    : `no element matching ${wanted.label} appeared within ${waited}`;
  return reported(opts.json, async () => {
    // The call's own deadline leaves room for the observations around the wait, so the wait ends first.
    const callTimeoutMs = waitMs + DEFAULT_TIMEOUT_MS;
    const done = await inElementSession(
      wanted,
      opts,
      ["waitForElement"],
      async (run) => {
        const params = { id: crypto.randomUUID(), name: "waitForElement", arguments: { selector, condition } };
        let result: ActionResult | null = null;
        try {
          result = await attempt(run, wanted, () =>
            run.c.call("device.execute", opts.timeout === undefined ? params : { ...params, actionTimeoutMs: waitMs }),
          );
        } catch (e) {
          if (!(e instanceof RemoteError && e.data.code === "action_timed_out")) throw e;
        }
        const output = result?.output as { matched: boolean; element: UiNodeRef | null } | undefined;
        // For --gone the element is there: only the screen is worth showing.
        if (!result || !output?.matched)
          throw new ElementFailure(`wait-for: ${notMatched}`, null, await diagnose(run, opts.gone ? null : selector));
        const line =
          !opts.json && output.element ? await describe(run, output.element, [result.before, result.after]) : null;
        return { run, result, line };
      },
      callTimeoutMs,
    );
    if (opts.json) printJson(done.result);
    else {
      const head = `${out().green("ok")} wait-for ${opts.gone ? "--gone " : ""}${wanted.label} on ${done.run.deviceId}`;
      print([
        `${head} (${condition} after ${took(done.result, done.result)}, session ${done.run.sessionId})`,
        ...(done.line ? [`element: ${done.line}`] : []),
      ]);
    }
    return 0;
  });
}

/** `find <selector>` → findElement: the one element, as `ui` prints it (with its ref while the listing is current). */
export async function findCommand(opts: ElementOpts): Promise<number> {
  const wanted = wantedFrom(opts);
  if (!wanted) throw usage("find needs an element: --text, --id, --role or --name");
  const selector = selectorOf(wanted) as ElementSelector;
  return reported(opts.json, async () => {
    const done = await inElementSession(wanted, opts, ["findElement"], async (run) => {
      const result = await attempt(run, wanted, () => execute(run.c, "findElement", { selector }));
      const element = (result.output as { element: UiNodeRef }).element;
      return { result, line: opts.json ? "" : await describe(run, element, [result.before]) };
    });
    if (opts.json) printJson(done.result);
    else print([done.line]);
    return 0;
  });
}
