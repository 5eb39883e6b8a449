import type { TestEvent } from "../protocol/types/event.ts";
import type { SessionInfo } from "../protocol/types/session.ts";
import type { Client } from "./client.ts";
import { RemoteError } from "./remote-error.ts";

/**
 * One events.list call: the page, or, when its answer would not fit one response line, the
 * largest limit whose page would (`details.fittingLimit`; 0 when not even one event fits).
 */
export type ListPage = (afterSequence: number, limit: number) => Promise<TestEvent[] | { fittingLimit: number }>;

const MAX_LIMIT = 1000;

/**
 * A Session's events after `afterSequence`, page by page through events.list, each page as large
 * as fits one response line: a page is asked for at the largest limit, and at the limit the daemon
 * names when that does not fit. Ends at a short page, or after `untilSequence`. An event too large
 * for any line ends the read with an error naming it.
 */
export async function* eventPages(
  list: ListPage,
  opts: { afterSequence?: number; untilSequence?: number } = {},
): AsyncGenerator<TestEvent[]> {
  let after = opts.afterSequence ?? 0;
  const until = opts.untilSequence ?? Number.POSITIVE_INFINITY;
  while (after < until) {
    let limit = MAX_LIMIT;
    let page = await list(after, limit);
    if (!Array.isArray(page)) {
      limit = page.fittingLimit;
      if (limit < 1)
        throw new Error(
          `event ${after + 1} is larger than one response line (1 MiB): it cannot be read a page at a time`,
        );
      page = await list(after, limit);
      if (!Array.isArray(page))
        throw new Error(`events after ${after} did not fit the limit the daemon named (${limit})`);
    }
    const kept = page.filter((e) => e.sequence <= until);
    if (kept.length) yield kept;
    const last = page.at(-1);
    if (!last || page.length < limit || kept.length < page.length) return;
    after = last.sequence;
  }
}

/** The fittingLimit of a response_frame_too_large error's details (0 when absent). */
export const fittingLimitOf = (details: unknown): number => {
  const n = (details as { fittingLimit?: unknown } | null)?.fittingLimit;
  return typeof n === "number" && Number.isInteger(n) && n > 0 ? n : 0;
};

/** events.list on an in-process connection, a page too large for one line told apart from other failures. */
export function listPage(rpc: Client, sessionId: string): ListPage {
  return async (afterSequence, limit) => {
    const out = await rpc.answer("events.list", { sessionId, limit, ...(afterSequence ? { afterSequence } : {}) });
    if (out.ok) return out.result;
    if (out.error.data.code === "response_frame_too_large")
      return { fittingLimit: fittingLimitOf(out.error.data.details) };
    throw new RemoteError("events.list", out.error);
  };
}

/** Events per page of a paged session.export (its largest limit). */
export const EXPORT_PAGE_LIMIT = 1000;

export type ExportPage = { session: SessionInfo; events: TestEvent[]; nextAfterSequence?: number };

/**
 * An ended Session's paged export, from the first page already read: its events, then each next
 * page's (session.export with afterSequence), until a page names no next one.
 */
export async function* exportPages(rpc: Client, sessionId: string, first: ExportPage): AsyncGenerator<TestEvent[]> {
  let page = first;
  for (;;) {
    yield page.events;
    if (page.nextAfterSequence === undefined) return;
    page = await rpc.call("session.export", {
      sessionId,
      limit: EXPORT_PAGE_LIMIT,
      afterSequence: page.nextAfterSequence,
    });
  }
}
