/**
 * Where an action's time goes (research note F10): on a real Simulator a tap costs the before
 * observation's tree read, AXe's own process and its internal tree read (`axe tap` translates the
 * point against a full frontmost-tree read, then sends the HID event), and the after
 * observation's tree read; SimBench measured a describe-ui median of 4,405 ms on Settings. The
 * driver times each backend tree read and each action's tool calls, and the after observation's
 * metadata carries them as `ios.timings`: `{ action, treeBeforeMs, toolMs, treeAfterMs }`.
 */
import type { CallContext } from "../../src/driver/driver.ts";
import type { Hid } from "./backends.ts";

/** describe-ui's ceiling per call (AxePort.describeUi). */
export const DESCRIBE_UI_CEILING_MS = 15_000;
/** AXe's HID broker waits for up to 10 s of boot uptime on DTUHID before input (`HIDBrokerReadiness.swift` dtuhidMinimumBootUptime = 10). */
export const HID_BROKER_READY_MS = 10_000;
/**
 * The ceiling of one AXe input call: its own full tree read (up to describe-ui's ceiling), the HID
 * broker's readiness wait and the event itself; the former 20 s could not hold the first two.
 */
export const AXE_INPUT_CEILING_MS = DESCRIBE_UI_CEILING_MS + HID_BROKER_READY_MS + 5_000;

export interface ActionTimings {
  action: string;
  treeBeforeMs: number | null;
  toolMs: number;
  treeAfterMs: number | null;
}

interface Recorder {
  /** Tree read time not yet given to an observation (several reads while an empty tree settles). */
  treeMs: number | null;
  /** The tree time of the newest observation that followed no action: the next action's "before". */
  lastObservationMs: number | null;
  pending: Omit<ActionTimings, "treeAfterMs"> | null;
}

const recorders = new WeakMap<Hid, Recorder>();

/** The backend with its tree reads timed. */
export function timedHid(hid: Hid | null): Hid | null {
  if (!hid) return null;
  const rec: Recorder = { treeMs: null, lastObservationMs: null, pending: null };
  const timed: Hid = {
    ...hid,
    tree: async (ctx: CallContext) => {
      const t0 = performance.now();
      try {
        return await hid.tree(ctx);
      } finally {
        rec.treeMs = (rec.treeMs ?? 0) + (performance.now() - t0);
      }
    },
  };
  recorders.set(timed, rec);
  return timed;
}

const ms = (v: number | null) => (v === null ? null : Math.round(v));

/** Runs one action's tool calls, timed against the tree reads of the observation before it. */
export async function timedAction<T>(hid: Hid | null, action: string, run: () => Promise<T>): Promise<T> {
  const rec = hid ? recorders.get(hid) : undefined;
  if (!rec) return run();
  const treeBeforeMs = rec.lastObservationMs;
  rec.lastObservationMs = null;
  const t0 = performance.now();
  try {
    return await run();
  } finally {
    rec.pending = { action, treeBeforeMs: ms(treeBeforeMs), toolMs: Math.round(performance.now() - t0) };
    rec.treeMs = null;
  }
}

/**
 * Called as an observation ends: for the one after an action, that action's timings (once);
 * otherwise nothing, and its tree time is kept as the next action's "before".
 */
export function timingsMetadata(hid: Hid | null): { timings?: ActionTimings } {
  const rec = hid ? recorders.get(hid) : undefined;
  if (!rec) return {};
  const treeMs = rec.treeMs;
  rec.treeMs = null;
  if (!rec.pending) {
    rec.lastObservationMs = treeMs;
    return {};
  }
  const timings = { ...rec.pending, treeAfterMs: ms(treeMs) };
  rec.pending = null;
  return { timings };
}
