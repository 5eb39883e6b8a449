/**
 * The two halves of an iOS observation, independent (research note F1): a tree read that fails,
 * hangs or prints something unparseable leaves the screenshot standing, and the observation carries
 * the tree's typed error as its omission reason (`uiTreeError`, as the Android driver reports it).
 * Only a screenshot failure, a cancel or a bug fails the observation, and then the tree read is
 * stopped too, so no describe-ui outlives the call.
 */
import { type CallContext, whenAborted } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";

/** What the tree leaves the screenshot of the deadline: a quarter of the budget, at most this. */
const TREE_MARGIN_MS = 1_500;

export interface Parts<T> {
  png: Uint8Array | null;
  tree: T | null;
  /** Why `tree` is null although it was asked for. */
  treeError: DriverError | null;
}

/** A typed device failure of the tree is an omission; a cancel or a bug is the call's failure. */
export const isOmission = (err: unknown, ctx: CallContext): err is DriverError =>
  err instanceof DriverError && err.driverCode !== "driver_cancelled" && !ctx.signal.aborted;

/**
 * The tree's own context: aborted with the call or when the screenshot fails, and ending a little
 * before the call's deadline so a hung describe-ui is killed while the screenshot can still be
 * returned (then its error is driver_timed_out).
 */
function treeContext(ctx: CallContext, stop: AbortController): CallContext {
  const unfollow = whenAborted(ctx.signal, () => stop.abort(ctx.signal.reason));
  stop.signal.addEventListener("abort", unfollow, { once: true });
  const deadline =
    ctx.deadline === null ? null : ctx.deadline - Math.min(TREE_MARGIN_MS, Math.max(0, ctx.deadline - Date.now()) / 4);
  return { ...ctx, signal: stop.signal, deadline };
}

export async function screenshotAndTree<T>(
  ctx: CallContext,
  shoot: ((c: CallContext) => Promise<Uint8Array>) | null,
  read: ((c: CallContext) => Promise<T>) | null,
): Promise<Parts<T>> {
  const stop = new AbortController();
  const treeCtx = treeContext(ctx, stop);
  try {
    const [shot, tree] = await Promise.allSettled([
      (async () => {
        try {
          return shoot ? await shoot(ctx) : null;
        } catch (err) {
          stop.abort("screenshot failed");
          throw err;
        }
      })(),
      read ? read(treeCtx) : Promise.resolve(null),
    ]);
    if (shot.status === "rejected") throw shot.reason;
    if (tree.status === "fulfilled") return { png: shot.value, tree: tree.value, treeError: null };
    if (!isOmission(tree.reason, ctx)) throw tree.reason;
    return { png: shot.value, tree: null, treeError: tree.reason };
  } finally {
    stop.abort("observation ended");
  }
}
