import type { TestEvent } from "../protocol/types/event.ts";
import { type LocalRpc, RpcFailure } from "./local-rpc.ts";

/** One events.list call: the page, or "too_large" when its answer would not fit one response line. */
export type ListPage = (afterSequence: number, limit: number) => Promise<TestEvent[] | "too_large">;

const MAX_LIMIT = 1000;

/**
 * A Session's events after `afterSequence`, page by page through events.list, each page as large
 * as fits one response line: a refused page is asked again at a quarter of the limit, and the limit
 * grows back after each page that fits. Ends at a short page, or after `untilSequence`. An event
 * too large for any line ends the read with an error naming it.
 */
export async function* eventPages(list: ListPage, opts: { afterSequence?: number; untilSequence?: number } = {}): AsyncGenerator<TestEvent[]> {
  let after = opts.afterSequence ?? 0;
  let limit = MAX_LIMIT;
  const until = opts.untilSequence ?? Number.POSITIVE_INFINITY;
  while (after < until) {
    const page = await list(after, limit);
    if (page === "too_large") {
      if (limit === 1) throw new Error(`event ${after + 1} is larger than one response line (1 MiB); read it with devicerail export`);
      limit = Math.max(1, Math.floor(limit / 4));
      continue;
    }
    const kept = page.filter((e) => e.sequence <= until);
    if (kept.length) yield kept;
    const last = page.at(-1);
    if (!last || page.length < limit || kept.length < page.length) return;
    after = last.sequence;
    limit = Math.min(MAX_LIMIT, limit * 2);
  }
}

/** events.list on an in-process connection, a page too large for one line told apart from other failures. */
export function listPage(rpc: LocalRpc, sessionId: string): ListPage {
  return async (afterSequence, limit) => {
    const out = await rpc.call("events.list", { sessionId, limit, ...(afterSequence ? { afterSequence } : {}) });
    if (out.ok) return out.result as TestEvent[];
    if (out.error.data.code === "response_frame_too_large") return "too_large";
    throw new RpcFailure("events.list", out.error);
  };
}
