/**
 * The one ReportSource: the daemon's records as a report needs them, read through a DeviceRail
 * client, whether the CLI's socket client (`devicerail report`) or the daemon's in-process one
 * (the live report route).
 */
import type { Client } from "../../client/client.ts";
import type { DeviceInfo } from "../../protocol/types/device.ts";
import { eventPages, listPage } from "../../client/event-pages.ts";
import { infoOf } from "../../protocol/types/session.ts";
import type { ReportSource } from "./model.ts";

/** `evidence` reads stored bytes by digest (null when they cannot be read): over HTTP for the CLI, from the store in the daemon. */
export function clientSource(client: Client, evidence: (sha256: string) => Promise<Uint8Array | null>): ReportSource {
  let devices: DeviceInfo[] | null = null;
  const summaryOf = async (id: string, params: { limit?: number; state?: "active" }) =>
    (await client.call("devicerail.sessions.list", params)).sessions.find((s) => s.id === id) ?? null;
  return {
    async head(id) {
      const summary = (await summaryOf(id, { limit: 1000 })) ?? (await summaryOf(id, { state: "active" }));
      if (summary) return { session: infoOf(summary), summary };
      // An ended Session older than the newest thousand: its info from the first export page (or session_not_found).
      return { session: (await client.call("session.export", { sessionId: id, limit: 1 })).session, summary: null };
    },
    pages: (session) => eventPages(listPage(client, session.id), { untilSequence: session.lastSequence }),
    async device(id) {
      devices ??= (await client.call("devices.list")).devices;
      return devices.find((d) => d.id === id) ?? null;
    },
    evidence: (sha) => evidence(sha).catch(() => null),
  };
}
