/**
 * What a failed element command saw, and how it is told: the elements closest to the selector
 * (with their refs and states) and the screen, read in the command's own Session right after the
 * failure, printed under the daemon's error in the CLI's failure format (and under `error` with
 * --json).
 */
import type { Observation } from "../protocol/types/observation.ts";
import type { ElementSelector, ElementTarget, UiNode, UiSnapshot } from "../protocol/types/ui.ts";
import { selectorMatcher } from "../core/devices/semantic/index.ts";
import { closestNodes, foregroundOf, uiStatesOf } from "../surfaces/interaction/index.ts";
import type { CoreClient } from "./client.ts";
import { nodeLine } from "./device-commands.ts";
import { describeError } from "./error-text.ts";
import type { RemoteError } from "../client/remote-error.ts";
import { CliError, EXIT, debugLine, err, printJsonError } from "./output.ts";
import { type RefListing, currentRef } from "./refs.ts";
import { stderr } from "./std-streams.ts";

export { foregroundOf };

export /** A Session on the routed device, with what the commands need to name and describe elements. */
interface Run {
  c: CoreClient;
  deviceId: string;
  sessionId: string;
  /** The device's last `ui` listing, if any. */
  listing: RefListing | null;
  target: ElementTarget;
}

/** What a failed element command saw: the elements closest to the selector and the screen. */
export interface Diagnosis {
  closest: { ref: string | null; node: UiNode; states: readonly string[] }[];
  screen: { foreground: string | null; context: UiSnapshot["context"] | null };
  /** What was read, recorded in the Session (so node references into it are honoured). */
  observed: { observation: Observation; snapshot: UiSnapshot | null };
}

/** A failure with its diagnosis; printed by `reported`, not by the generic failure output. */
export class ElementFailure extends CliError {
  constructor(
    message: string,
    readonly rpc: RemoteError | null,
    readonly diagnosis: Diagnosis | null,
    readonly detail: string[] = [],
  ) {
    super(message, EXIT.runtime);
  }
}

/**
 * One observation and its tree, in the failed command's Session: the elements closest to
 * `selector` (none without one) and the screen. Null when even that fails, so the original error
 * is still reported.
 */
export async function diagnose(run: Run, selector: ElementSelector | null): Promise<Diagnosis | null> {
  try {
    const o = await run.c.call("device.observe");
    const snapshot = o.uiSnapshot ? await run.c.call("ui.snapshot.get", { observationId: o.id }) : null;
    const states = uiStatesOf(o.metadata);
    const closest =
      snapshot && selector
        ? closestNodes(snapshot.nodes, selector, selectorMatcher).map((i) => {
            const node = snapshot.nodes[i] as UiNode;
            return {
              ref: currentRef(run.listing, snapshot.context, node.stableNodeId),
              node,
              states: states[node.stableNodeId] ?? [],
            };
          })
        : [];
    return {
      closest,
      screen: { foreground: foregroundOf(o.metadata), context: snapshot?.context ?? o.uiSnapshot?.context ?? null },
      observed: { observation: o, snapshot },
    };
  } catch {
    return null;
  }
}

function diagnosisLines(d: Diagnosis | null, st = err()): string[] {
  if (!d) return [];
  const lines: string[] = [];
  if (d.closest.length)
    lines.push(
      "closest elements:",
      ...d.closest.map((c) => `  ${c.ref ? `${c.ref} ` : ""}${nodeLine(c.node, c.states, st)}`),
    );
  const { foreground, context } = d.screen;
  const ctx = context ? `${context.contextKind} context ${context.contextId}, document ${context.documentEpoch}` : null;
  if (foreground || ctx) lines.push(`screen: ${[foreground, ctx].filter(Boolean).join(" — ")}`);
  return lines;
}

/** Runs a command; an ElementFailure is printed here, with its diagnosis, in the CLI's failure format. */
export async function reported(json: boolean | undefined, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (e) {
    if (!(e instanceof ElementFailure)) throw e;
    const st = err();
    const r = e.rpc;
    const head = r ? describeError(r.error) : [e.message];
    const rest = [...e.detail, ...diagnosisLines(e.diagnosis, st)].map((l) => `  ${l}`);
    stderr.write(`${st.red("devicerail:")} ${[...head, ...rest, ...(r ? debugLine(r) : [])].join("\n")}\n`);
    if (json) printJsonError(r ?? e, { closest: e.diagnosis?.closest ?? [], screen: e.diagnosis?.screen ?? null });
    return e.exitCode;
  }
}
