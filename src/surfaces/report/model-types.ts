/**
 * The report model's shape: what model.ts writes as JSON and the page's script (browser/) reads.
 * Types only, importing only protocol types, so the browser's type check (browser/tsconfig.json,
 * no Bun or Node types) can include it and nothing of the server reaches the page's bundle.
 */
import type { DeviceInfo } from "../../protocol/types/device.ts";
import type { TestEvent } from "../../protocol/types/event.ts";
import type { SessionSummary } from "../../protocol/types/extensions.ts";
import type { SessionInfo } from "../../protocol/types/session.ts";

/** A UI tree node, short keys: the page needs only this. */
export interface TreeNode {
  /** stableNodeId */
  id: string;
  /** parent's stableNodeId */
  p: string | null;
  role: string;
  text: string | null;
  name: string | null;
  value: string | null;
  ident: string | null;
  /** bounds x, y, width, height in device pixels */
  b: [number, number, number, number] | null;
  en: boolean | null;
}

export interface ReportImage {
  /** What the page shows: a data: URL (a file report) or /evidence/<sha> (the live viewer). */
  src: string;
  width: number;
  height: number;
  /** The stored picture's own size. */
  sourceWidth: number;
  sourceHeight: number;
  /** The full-size picture when the report embeds it (--full-images), else null. */
  full: string | null;
}

export interface ReportModel {
  formatVersion: 1;
  generatedAtMs: number;
  host: string;
  daemonVersion: string;
  session: SessionInfo;
  summary: SessionSummary | null;
  device: DeviceInfo | null;
  events: TestEvent[];
  /** By screenshot digest. */
  images: Record<string, ReportImage>;
  /**
   * By UI-tree digest. Trees differ by digest even when their nodes are the same (a tree names its
   * observation), so a repeated tree is the digest of the first with those nodes.
   */
  trees: Record<string, TreeNode[] | string>;
  /** Set by the live viewer: where the page subscribes to the Session's new events. */
  /** `evidenceQuery` follows the digest in evidence URLs (a browser's view key, viewer-passes.ts). */
  live: { endpoint: string; streamEpoch: string; evidenceBase: string; evidenceQuery?: string } | null;
}
