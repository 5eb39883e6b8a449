/**
 * What a session report shows: the Session's events as recorded, with the screenshots they name
 * as small embedded JPEGs (one per distinct screen) and the UI trees they name in a compact form.
 * It is written out as JSON while the events are read a page at a time (modelChunks), so its size
 * is not held in memory. The page (page.ts) draws everything from this; the live viewer sends the
 * same shape and then appends events as they come.
 */
import { hostname } from "node:os";
import type { DeviceInfo } from "../../protocol/types/device.ts";
import { MEDIA_TYPE_UI_TREE, assetRefsIn } from "../../protocol/types/evidence.ts";
import type { TestEvent } from "../../protocol/types/event.ts";
import type { Observation } from "../../protocol/types/observation.ts";
import type { SessionSummary } from "../../protocol/types/extensions.ts";
import { type SessionInfo, infoOf } from "../../protocol/types/session.ts";
import type { UiNode, UiSnapshot } from "../../protocol/types/ui.ts";
import type { ReportImage, ReportModel, TreeNode } from "./model-types.ts";

/** The model's shape lives beside it, free of server code, so that the page's script (browser/) can import it. */
export type { ReportImage, ReportModel, TreeNode };

const MEDIA_PNG = "image/png";

/** What the report says of the Session before its events: read first, so an unknown id fails before anything is written. */
export interface ReportHead {
  session: SessionInfo;
  summary: SessionSummary | null;
}

/** A device no longer attached, still named by its id. */
export const deviceNamedById = (id: string): DeviceInfo => ({
  id,
  name: id,
  platform: { kind: "other", value: "unknown" },
  osVersion: null,
  connected: false,
});

/** Where the report's facts come from: a CLI client of the daemon, or the daemon itself. */
export interface ReportSource {
  /** The Session's info and summary; throws the source's not-found error for an unknown id. */
  head(sessionId: string): Promise<ReportHead>;
  /** The Session's events in order, a page of bounded size at a time, up to `session.lastSequence`. */
  pages(session: SessionInfo): AsyncIterable<TestEvent[]>;
  device(deviceId: string): Promise<DeviceInfo | null>;
  evidence(sha256: string): Promise<Uint8Array | null>;
}

export interface ReportOptions {
  daemonVersion: string;
  /** Long edge of the embedded screenshots (default 480). */
  thumbEdge?: number;
  /** Embed every screenshot at full size as well. */
  fullImages?: boolean;
  /** Screenshots as links to the daemon (`/evidence/<sha>`) instead of embedded bytes. */
  linkedImages?: boolean;
  /** Appended to linked images' URLs (`?view=KEY` on a port that requires a token). */
  evidenceQuery?: string;
  /** Counted as the model is written: its events and screenshots. */
  counts?: { events: number; screenshots: number };
}

export const THUMB_EDGE = 480;
const THUMB_QUALITY = 70;

/** Screenshot and tree digests the events name, each once, in the order first named. */
export function evidenceOf(events: readonly TestEvent[]): { screenshots: string[]; trees: string[] } {
  const refs = [...assetRefsIn(events)];
  return {
    screenshots: refs.filter(([, t]) => t === MEDIA_PNG).map(([sha]) => sha),
    trees: refs.filter(([, t]) => t === MEDIA_TYPE_UI_TREE).map(([sha]) => sha),
  };
}

export function compactTree(nodes: readonly UiNode[]): TreeNode[] {
  return nodes.map((n) => ({
    id: n.stableNodeId,
    p: n.parentStableNodeId,
    role: n.role,
    text: n.text,
    name: n.name,
    value: n.value,
    ident: n.identifier,
    b: n.bounds ? [n.bounds.x, n.bounds.y, n.bounds.width, n.bounds.height] : null,
    en: n.enabled,
  }));
}

async function image(bytes: Uint8Array, sha: string, opts: ReportOptions): Promise<ReportImage> {
  const { width: sw, height: sh } = await new Bun.Image(bytes).metadata();
  if (opts.linkedImages)
    return {
      src: `/evidence/${sha}${opts.evidenceQuery ?? ""}`,
      width: sw,
      height: sh,
      sourceWidth: sw,
      sourceHeight: sh,
      full: null,
    };
  const edge = opts.thumbEdge ?? THUMB_EDGE;
  const scale = Math.min(1, edge / Math.max(sw, sh));
  const [w, h] = [Math.max(1, Math.round(sw * scale)), Math.max(1, Math.round(sh * scale))];
  let img = new Bun.Image(bytes);
  if (w !== sw || h !== sh) img = img.resize(w, h, { filter: "lanczos3" });
  const thumb = await img.jpeg({ quality: THUMB_QUALITY }).bytes();
  const full = opts.fullImages ? `data:image/png;base64,${Buffer.from(bytes).toString("base64")}` : null;
  return {
    src: `data:image/jpeg;base64,${Buffer.from(thumb).toString("base64")}`,
    width: w,
    height: h,
    sourceWidth: sw,
    sourceHeight: sh,
    full,
  };
}

/** `items` in groups of `n`: image encodes run off the main thread, a few at a time. */
function* groups<T>(items: readonly T[], n: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += n) yield items.slice(i, i + n);
}

/**
 * An Observation with what the page reads and nothing else: its screenshot and tree digests,
 * viewport and foreground. The rest (asset URIs, contexts, byte counts) would be most of a long
 * Session's report.
 */
function slimObservation(o: Observation | null): Observation | null {
  if (!o) return o;
  const m = o.metadata ?? {};
  const metadata = Object.fromEntries(
    ["foreground", "foregroundApp", "screen", "uiStates"].filter((k) => k in m).map((k) => [k, m[k]]),
  );
  return {
    id: o.id,
    deviceId: o.deviceId,
    capturedAtMs: o.capturedAtMs,
    viewport: o.viewport,
    screenshot: o.screenshot ? ({ sha256: o.screenshot.sha256 } as Observation["screenshot"]) : null,
    ...(o.screenshotOmission ? { screenshotOmission: o.screenshotOmission } : {}),
    ...(o.uiSnapshot
      ? { uiSnapshot: { evidence: { sha256: o.uiSnapshot.evidence.sha256 } } as Observation["uiSnapshot"] }
      : {}),
    ...(o.uiSnapshotOmission ? { uiSnapshotOmission: o.uiSnapshotOmission } : {}),
    metadata,
  };
}

export function slimEvent(e: TestEvent): TestEvent {
  const p = e.payload;
  // The event types describe the wire form; a slimmed observation is the page's, hence the casts.
  if (p.type === "observationCaptured")
    return { ...e, payload: { ...p, observation: slimObservation(p.observation as Observation) as never } };
  if (p.type === "actionCompleted" && p.outcome.outcome === "succeeded") {
    const r = p.outcome.result;
    const slim = {
      ...r,
      before: slimObservation(r.before as Observation | null),
      after: slimObservation(r.after as Observation | null),
      evidence: [],
    };
    return { ...e, payload: { ...p, outcome: { ...p.outcome, result: slim as never } } };
  }
  return e;
}

const json = (x: unknown) => JSON.stringify(x) ?? "null";

function treeOf(bytes: Uint8Array | null): TreeNode[] | null {
  if (!bytes) return null;
  try {
    return compactTree((JSON.parse(new TextDecoder().decode(bytes)) as UiSnapshot).nodes);
  } catch {
    return null;
  }
}

/**
 * The report model as JSON text, written as it is read: the head, each page of events as it
 * arrives (slimmed), then the device, one image and one tree at a time, and `live` (asked last, so
 * a capability it opens is fresh). Nothing but the digests named so far and one page is held, so
 * a report of any size costs the same memory. `live` is asked for when everything else is written.
 */
export async function* modelChunks(
  source: ReportSource,
  head: ReportHead,
  opts: ReportOptions,
  live?: () => Promise<ReportModel["live"]>,
): AsyncGenerator<string> {
  const { session, summary } = head;
  yield `{"formatVersion":1,"generatedAtMs":${Date.now()},"host":${json(hostname())},"daemonVersion":${json(opts.daemonVersion)},"session":${json(session)},"summary":${json(summary)},"events":[`;
  const screenshots = new Set<string>();
  const trees = new Set<string>();
  let deviceId = summary?.deviceId ?? null;
  let sep = "";
  for await (const page of source.pages(session)) {
    if (!page.length) continue;
    const named = evidenceOf(page);
    for (const sha of named.screenshots) screenshots.add(sha);
    for (const sha of named.trees) trees.add(sha);
    deviceId ??= page.find((e) => e.deviceId)?.deviceId ?? null;
    if (opts.counts) opts.counts.events += page.length;
    yield `${sep}${page.map((e) => json(slimEvent(e))).join(",")}`;
    sep = ",";
  }
  const device = deviceId ? await source.device(deviceId) : null;
  // A device no longer attached is still named by its id.
  const named = device ?? (deviceId ? deviceNamedById(deviceId) : null);
  yield `],"device":${json(named)},"images":{`;
  sep = "";
  for (const group of groups([...screenshots], 4)) {
    const done = await Promise.all(group.map(async (sha) => ({ sha, bytes: await source.evidence(sha) })));
    for (const { sha, bytes } of done) {
      if (!bytes) continue;
      if (opts.counts) opts.counts.screenshots++;
      yield `${sep}${json(sha)}:${json(await image(bytes, sha, opts))}`;
      sep = ",";
    }
  }
  yield `},"trees":{`;
  // Trees differ by digest even when their nodes are the same: a repeated tree names the first
  // with those nodes, known by the SHA-256 of their JSON, and always listed before it.
  const firstWith = new Map<string, string>();
  sep = "";
  for (const group of groups([...trees], 8)) {
    const done = await Promise.all(group.map(async (sha) => ({ sha, nodes: treeOf(await source.evidence(sha)) })));
    for (const { sha, nodes } of done) {
      if (!nodes) continue;
      const text = json(nodes);
      const key = new Bun.CryptoHasher("sha256").update(text).digest("hex");
      const first = firstWith.get(key);
      if (!first) firstWith.set(key, sha);
      yield `${sep}${json(sha)}:${first ? json(first) : text}`;
      sep = ",";
    }
  }
  yield `},"live":${json((await live?.()) ?? null)}}`;
}

/** The whole model in memory, for small Sessions and tests: what modelChunks writes, parsed. */
export async function buildModel(source: ReportSource, sessionId: string, opts: ReportOptions): Promise<ReportModel> {
  const parts: string[] = [];
  for await (const part of modelChunks(source, await source.head(sessionId), opts)) parts.push(part);
  return JSON.parse(parts.join("")) as ReportModel;
}
