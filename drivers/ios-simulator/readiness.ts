/**
 * Waiting for the accessibility tree that is empty right after boot (research F3).
 *
 * On iOS 26 a fresh Simulator's `describe-ui` gives a bare `AXApplication` with a zero frame and
 * no children (XcodeBuildMCP #290) for about 8 s after `bootstatus` (maintainer measurements in
 * XcodeBuildMCP PR #312), and an app launched before that keeps the empty tree until it is
 * relaunched (#408). Apps without accessibility stay empty for good. So: one bounded wait per
 * connection (default 15 s from connect) for a non-empty tree, then at most one short wait per app
 * (keyed by the pid AXe prints on every node, or the root's label), after which an empty tree is
 * answered at once with the typed omission `ios_tree_not_ready` instead of polling again on every
 * observation. The accessibility defaults are not written: PR #312 found that writing them early
 * kept the tree empty for more than 90 s.
 */
import type { CallContext } from "../../src/driver/driver.ts";
import type { DriverError } from "../../src/driver/driver-error.ts";
import { pause } from "../../src/driver/pause.ts";
import type { Hid } from "./backends.ts";
import { platformError } from "./tool-process.ts";
import { parseTree } from "./ui-tree.ts";

/** The default wait after connect for the first non-empty tree (IosOptions.axReadyWaitMs). */
export const AX_READY_WAIT_MS = 15_000;
/** The one wait an app that shows an empty tree gets after that (at most axReadyWaitMs). */
const APP_WAIT_MS = 5_000;
const POLL_MS = 250;
/** Polling stops this long before the call's deadline: one more describe-ui must not run it out. */
const DEADLINE_MARGIN_MS = 2_000;
const PID = /"pid"\s*:\s*(\d+)/;

export interface SettledTree {
  json: string;
  /** Why the tree is empty, when it still is after its wait (the observation's uiTreeError). */
  notReady: DriverError | null;
  /** How long this observation waited for a non-empty tree. */
  waitedMs: number;
}

/** One connected simulator's readiness. */
export class AxReadiness {
  private readonly since = Date.now();
  /** A non-empty tree has been seen since connect: the Simulator's AX works. */
  private ready = false;
  /** App key → when it was first seen with an empty tree. */
  private readonly emptySince = new Map<string, number>();

  constructor(private readonly waitMs: number = AX_READY_WAIT_MS) {}

  /** The backend's tree, polled while it is empty and its wait (connection's or app's) has not run out. */
  async settle(hid: Hid, ctx: CallContext): Promise<SettledTree> {
    const start = Date.now();
    for (;;) {
      const json = await hid.tree(ctx);
      const tree = parseTree(json, () => 1);
      const pid = PID.exec(json)?.[1];
      const key = pid ? `pid ${pid}` : `app ${tree.appName ?? "unknown"}`;
      const now = Date.now();
      if (!tree.empty) {
        this.ready = true;
        this.emptySince.delete(key);
        return { json, notReady: null, waitedMs: now - start };
      }
      const first = this.emptySince.get(key) ?? now;
      this.emptySince.set(key, first);
      const window = Math.max(this.ready ? 0 : this.since + this.waitMs, first + Math.min(APP_WAIT_MS, this.waitMs));
      const until = Math.min(
        window,
        ctx.deadline === null ? Number.POSITIVE_INFINITY : ctx.deadline - DEADLINE_MARGIN_MS,
      );
      if (now >= until) return { json, notReady: notReady(key, now - first, this.ready), waitedMs: now - start };
      await pause(Math.min(POLL_MS, until - now), ctx);
    }
  }
}

function notReady(key: string, emptyMs: number, axWorks: boolean): DriverError {
  return platformError(
    "ios_tree_not_ready",
    true,
    `describe-ui has given only the bare application root (${key}) for ${Math.round(emptyMs / 100) / 10} s${axWorks ? "" : ", and no tree since connect"}`,
    axWorks
      ? "this app's accessibility tree is empty: an app launched before the Simulator's accessibility was ready stays empty until it is relaunched (terminate and launch it, then observe again); apps without accessibility support stay empty"
      : "the Simulator's accessibility tree is still empty: right after boot it takes several seconds, and an app launched before then stays empty until it is relaunched (terminate and launch it, then observe again)",
  );
}
