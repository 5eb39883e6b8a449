/**
 * Golden protocol fixtures (fixtures/protocol): every file is in the manifest, and the generated JSON
 * Schemas accept it unless the manifest marks it `schemaValid: false`, and then reject it; every
 * method has a success pair and an rpcFailure; the values are internally consistent (canonical
 * AssetRefs, UI-tree preorder and digest, one Session log); and each replayable request reproduces
 * its response on a fresh daemon.
 *
 * Replay design. A replayable request names `replay.hello` (params of a hello sent first, or null),
 * `replay.before` (requests sent one by one, each answer awaited, to build up state: device.connect,
 * session.start, …) and optionally `replay.bind`. The fixtures were recorded from a real daemon, so
 * they contain the random values of that run; two mechanisms make them comparable with a new run:
 *
 * - `replay.bind` = { name: { step, pointer, recorded } }: the value the daemon answered to
 *   `before[step]` at JSON Pointer `pointer` (e.g. session.start → /result/id) is the live value of
 *   the variable; `recorded` is the value that run produced and that the fixture files contain.
 *   Every occurrence of `recorded` (whole string or inside one, e.g. an error message) in the later
 *   before-steps, in the request and in the expected response is replaced by the live value. That
 *   is how a request passes a Session id it was given earlier, and how a response must echo exactly
 *   the Session/Observation/event ids that earlier answers produced.
 * - Shape comparison of the final answer (`shape`): lowercase v4 UUIDs that are neither pinned nor
 *   bound are replaced by `<uuid:1>`, `<uuid:2>`, … numbered by first appearance (keys visited in
 *   sorted order), separately but identically for the expected and the actual answer, so one id
 *   appearing twice must still match itself and two different ids must stay different. Pinned
 *   (compared exactly) are the UUIDs the client chose — anything in a request that was sent, e.g. a
 *   device.execute call id or an unknown sessionId — and the bound live values. Timestamps (`atMs`
 *   and every `*AtMs`), the durations between them (`durationMs`) and `connectionId` are compared
 *   by type only (`normalizeVolatile`, plus `atMs` and `durationMs` in `shape`).
 *
 * The Mock's `metadata.frameSequence` counts per daemon process, so every replay uses a fresh daemon
 * (and a fresh data directory: the event store is durable).
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { methodSchemaId, schemaId } from "../../scripts/gen-protocol.ts";
import { MockApp } from "../../drivers/mock/mock-app.ts";
import { renderScreen } from "../../drivers/mock/mock-screen.ts";
import { METHOD_NAMES } from "../../src/protocol/methods.ts";
import { ROOT, normalizeVolatile, spawnDaemon } from "../support/daemon.ts";
import { generatedSchemas } from "./generated-schemas.ts";

const FIXTURES = join(ROOT, "fixtures");
const PROTOCOL_DIR = join(FIXTURES, "protocol");
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UUID_ANY_CASE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Every lowercase v4 UUID inside a string (whole value or part of a message). */
const UUID_V4_ALL = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/g;
const UI_TREE_MEDIA_TYPE = "application/vnd.devicerail.ui-tree+json;version=1";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };
/** A daemon-generated value captured from a before-step's answer (see the design note above). */
interface Binding {
  step: number;
  pointer: string;
  recorded: string;
}
interface Replay {
  hello: Obj | null;
  before: Obj[];
  bind?: Record<string, Binding>;
  response: string;
}
interface Entry {
  id: string;
  path: string;
  method: string | null;
  kind: string;
  schema: string | null;
  schemaValid?: false;
  replay: Replay | null;
  replayNote?: string;
  /** What the pair shows beyond its request and response (e.g. side effects on the Session log). */
  note?: string;
}
interface Manifest {
  manifestVersion: number;
  protocol: { major: number; minor: number };
  fixtures: Entry[];
}

const manifest = JSON.parse(readFileSync(join(PROTOCOL_DIR, "manifest.json"), "utf8")) as Manifest;
const entries = manifest.fixtures;
const byId = new Map(entries.map((e) => [e.id, e]));
const byPath = new Map(entries.map((e) => [e.path, e]));
const isRaw = (e: Entry) => e.path.endsWith(".txt");
const isRequest = (e: Entry) => /\.request\.(json|txt)$/.test(e.path);
const requests = entries.filter(isRequest);
const responses = entries.filter((e) => e.path.endsWith(".response.json"));

function readText(e: Entry): string {
  return readFileSync(join(FIXTURES, e.path), "utf8");
}
function readJson(e: Entry): Obj {
  return JSON.parse(readText(e)) as Obj;
}
/** The response fixture beside a request fixture (`<case>.request.*` ↔ `<case>.response.json`). */
function responseOf(request: Entry): Entry {
  const path = request.path.replace(/\.request\.(json|txt)$/, ".response.json");
  const e = byPath.get(path);
  if (!e) throw new Error(`no response fixture for ${request.id}`);
  return e;
}
const camel = (method: string) => method.replace(/\.([a-z])/g, (_, c: string) => c.toUpperCase());

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? walk(join(dir, d.name)) : [join(dir, d.name)],
  );
}

/** Every value in a JSON tree, depth first. */
function* values(node: Json): Generator<Json> {
  yield node;
  if (Array.isArray(node)) for (const x of node) yield* values(x);
  else if (node && typeof node === "object") for (const x of Object.values(node)) yield* values(x);
}
const isObj = (x: Json): x is Obj => !!x && typeof x === "object" && !Array.isArray(x);

describe("fixture manifest", () => {
  test("declares manifest version 1 for protocol 1.5 when read", () => {
    expect({ manifestVersion: manifest.manifestVersion, protocol: manifest.protocol }).toEqual({
      manifestVersion: 1,
      protocol: { major: 1, minor: 5 },
    });
  });

  test("lists every fixture file exactly once when the fixture tree is walked", () => {
    const onDisk = walk(PROTOCOL_DIR)
      .map((p) => p.slice(FIXTURES.length + 1))
      .filter((p) => p !== "protocol/manifest.json")
      .sort();
    const listed = entries.map((e) => e.path).sort();
    expect(listed).toEqual(onDisk);
    expect(new Set(listed).size).toBe(listed.length);
  });

  test("points at existing files when every path is resolved", () => {
    expect(entries.filter((e) => !existsSync(join(FIXTURES, e.path))).map((e) => e.path)).toEqual([]);
  });

  test("uses unique ids when all entries are compared", () => {
    const ids = entries.map((e) => e.id);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  test("gives kinds that follow the method when a fixture is a request or a response", () => {
    const wrong = entries.filter((e) => {
      if (isRequest(e)) {
        if (isRaw(e)) return e.kind !== "rawLine";
        return (
          e.kind !==
          (e.method && (METHOD_NAMES as string[]).includes(e.method) ? `${camel(e.method)}Request` : "rpcRequest")
        );
      }
      const body = readJson(e);
      return e.kind !== ("error" in body ? "rpcFailure" : `${camel(e.method as string)}Response`);
    });
    expect(wrong.map((e) => e.id)).toEqual([]);
  });

  test("names the method's generated schema when a fixture belongs to a known method", () => {
    const expected = (e: Entry): string | null => {
      const known = e.method !== null && (METHOD_NAMES as string[]).includes(e.method);
      if (isRequest(e)) {
        if (isRaw(e)) return null;
        if (e.path.startsWith("protocol/_envelope/")) return schemaId("RpcRequest");
        return methodSchemaId(e.method as string, "request");
      }
      return known ? methodSchemaId(e.method as string, "response") : schemaId("RpcFailure");
    };
    expect(entries.filter((e) => e.schema !== expected(e)).map((e) => e.id)).toEqual([]);
  });

  test("names the method the request names when a request is decodable", () => {
    const wrong = requests.filter((e) => (isRaw(e) ? e.method !== null : e.method !== readJson(e).method));
    expect(wrong.map((e) => e.id)).toEqual([]);
  });

  test("pairs each request with the response beside it when replay and paths are compared", () => {
    expect(requests.length).toBe(responses.length);
    const mismatched = requests.filter((e) => {
      const res = responseOf(e);
      return res.method !== e.method || (e.replay !== null && e.replay.response !== res.id);
    });
    expect(mismatched.map((e) => e.id)).toEqual([]);
  });

  test("explains the missing replay when a request is not replayable", () => {
    const wrong = entries.filter((e) =>
      isRequest(e)
        ? (e.replay === null) !== (typeof e.replayNote === "string" && e.replayNote.length > 0)
        : e.replay !== null || "replayNote" in e,
    );
    expect(wrong.map((e) => e.id)).toEqual([]);
  });

  test("covers a success request, a success response and an rpcFailure when each method of the table is checked", () => {
    const coverage = METHOD_NAMES.map((method) => {
      const mine = entries.filter((e) => e.method === method && !e.path.startsWith("protocol/_envelope/"));
      const successRequests = mine.filter((e) => isRequest(e) && responseOf(e).kind === `${camel(method)}Response`);
      return {
        method,
        successRequest: successRequests.some((e) => e.kind === `${camel(method)}Request`),
        successResponse: mine.some((e) => e.kind === `${camel(method)}Response`),
        rpcFailure: mine.some((e) => e.kind === "rpcFailure"),
      };
    });
    expect(coverage).toEqual(
      METHOD_NAMES.map((method) => ({ method, successRequest: true, successResponse: true, rpcFailure: true })),
    );
  });

  test("replays a success pair for every control-plane method when the replayable set is listed", () => {
    // events.subscribe exists only on the event WebSocket: test/e2e/event-stream.test.ts replays
    // its fixtures over the daemon's real WebSocket.
    const notYet = ["events.subscribe"];
    const replayedSuccess = requests
      .filter((e) => e.replay !== null && responseOf(e).kind !== "rpcFailure")
      .map((e) => e.method)
      .filter((m, i, all) => all.indexOf(m) === i)
      .sort();
    expect(replayedSuccess).toEqual((METHOD_NAMES as string[]).filter((m) => !notYet.includes(m)).sort());
  });

  test("binds recorded v4 UUIDs that an earlier answer produced and the fixture reuses when a replay captures values", () => {
    const wrong = requests.flatMap((e) =>
      Object.entries(e.replay?.bind ?? {}).flatMap(([name, b]) => {
        const before = (e.replay as Replay).before;
        const later = JSON.stringify([
          before.slice(b.step + 1),
          isRaw(e) ? readText(e) : readJson(e),
          readJson(responseOf(e)),
        ]);
        const problems = [
          Number.isInteger(b.step) && b.step >= 0 && b.step < before.length ? null : "step outside before",
          /^(\/[^/]*)+$/.test(b.pointer) ? null : "pointer is not a JSON Pointer",
          UUID_V4.test(b.recorded) ? null : "recorded is not a lowercase v4 UUID",
          JSON.stringify(before.slice(0, b.step + 1)).includes(b.recorded)
            ? "recorded was chosen by a request, not produced"
            : null,
          later.includes(b.recorded) ? null : "recorded is never used",
        ].filter((p) => p !== null);
        return problems.map((p) => `${e.id} ${name}: ${p}`);
      }),
    );
    expect(wrong).toEqual([]);
  });
});

describe("fixture schemas", () => {
  const ajv = generatedSchemas();

  test("exempts only raw request lines when an entry has no schema", () => {
    expect(
      entries
        .filter((e) => e.schema === null)
        .map((e) => e.kind)
        .filter((k) => k !== "rawLine"),
    ).toEqual([]);
  });

  test("expects a schema rejection only when the daemon rejects the request's shape", () => {
    const marked = entries.filter((e) => e.schemaValid === false);
    const wrong = marked.filter((e) => {
      if (!isRequest(e)) return true;
      const res = readJson(responseOf(e));
      return !["invalid_request", "invalid_params"].includes(
        ((res.error as Obj | undefined)?.data as Obj | undefined)?.code as string,
      );
    });
    expect(marked.length).toBeGreaterThan(0);
    expect(wrong.map((e) => e.id)).toEqual([]);
  });

  test("marks schema validity only as false when an entry carries the flag", () => {
    // Any other value would read as "valid" below and silently drop the expected rejection.
    expect(entries.filter((e) => "schemaValid" in e && e.schemaValid !== false).map((e) => e.id)).toEqual([]);
  });

  test("accepts every replay hello when validated as the system.hello request the replay sends", () => {
    const validate = ajv.getSchema(methodSchemaId("system.hello", "request"));
    const wrong = requests.flatMap((e) => {
      const params = e.replay?.hello ?? null;
      if (params === null) return [];
      return validate?.({ jsonrpc: "2.0", id: "replay-hello", method: "system.hello", params })
        ? []
        : [`${e.id}: ${JSON.stringify(validate?.errors ?? "no schema")}`];
    });
    expect(wrong).toEqual([]);
  });

  test("accepts every before-step when validated against its method's request schema", () => {
    const wrong = requests.flatMap((e) =>
      (e.replay?.before ?? []).flatMap((step, i) => {
        const validate = ajv.getSchema(methodSchemaId(step.method as string, "request"));
        return validate?.(step) ? [] : [`${e.id} before[${i}]: ${JSON.stringify(validate?.errors ?? "no schema")}`];
      }),
    );
    expect(wrong).toEqual([]);
  });

  for (const e of entries.filter((x) => x.schema !== null)) {
    const expectValid = e.schemaValid !== false;
    test(`${expectValid ? "accepts" : "rejects"} ${e.id} when validated against ${e.schema}`, () => {
      const validate = ajv.getSchema(e.schema as string);
      expect(validate).toBeDefined();
      const ok = validate?.(readJson(e)) as boolean;
      expect({ ok, errors: ok === expectValid ? null : validate?.errors }).toEqual({ ok: expectValid, errors: null });
    });
  }
});

describe("fixture values", () => {
  // rpc.discover's answer is the OpenRPC document: it describes these values (its schemas have
  // `sha256`, `uri` and `eventId` properties) and holds none, so it is left out of their checks.
  const describesValues = (e: Entry) =>
    e.method === "rpc.discover" && e.path.endsWith(".response.json") && "result" in readJson(e);
  const all = entries.filter((e) => !isRaw(e) && !describesValues(e)).map((e) => ({ e, body: readJson(e) }));

  test("echo the request id when a response answers a decodable request", () => {
    const wrong = requests.flatMap((req) => {
      const res = readJson(responseOf(req));
      const decodeFailure =
        isObj(res.error ?? null) &&
        ["parse_error", "invalid_request"].includes(((res.error as Obj).data as Obj).code as string);
      const expected = decodeFailure ? null : readJson(req).id;
      return res.id === expected ? [] : [{ request: req.id, expected, actual: res.id }];
    });
    expect(wrong).toEqual([]);
  });

  test("hold the generated OpenRPC document when rpc.discover succeeds (after `bun run gen` changed it: `bun run fixtures --only rpc.discover`)", () => {
    const answers = entries.filter(describesValues).map((e) => readJson(e).result);
    const generated = JSON.parse(readFileSync(join(ROOT, "src/protocol/generated/openrpc.json"), "utf8")) as Json;
    expect(answers.length).toBeGreaterThan(0);
    for (const answer of answers) expect(answer).toEqual(generated);
  });

  test("use lowercase v4 UUIDs when a string looks like a UUID", () => {
    const bad = all.flatMap(({ e, body }) =>
      [...values(body)]
        .filter((v): v is string => typeof v === "string" && UUID_ANY_CASE.test(v) && !UUID_V4.test(v))
        .map((v) => `${e.id}: ${v}`),
    );
    expect(bad).toEqual([]);
  });

  test("use canonical AssetRefs when an object carries an evidence reference", () => {
    const refs = all.flatMap(({ body }) =>
      [...values(body)].filter((v): v is Obj => isObj(v) && "sha256" in v && "uri" in v),
    );
    const bad = refs.filter((r) => {
      const h = r.sha256 as string;
      const mt = r.mediaType as string;
      return !(
        /^[0-9a-f]{64}$/.test(h) &&
        r.id === `sha256:${h}` &&
        r.uri === `devicerail://assets/sha256/${h}` &&
        /^[!-~]+$/.test(mt) &&
        mt.split("/").length === 2 &&
        ["image/png", UI_TREE_MEDIA_TYPE].includes(mt)
      );
    });
    expect(refs.length).toBeGreaterThan(0);
    expect(bad).toEqual([]);
  });

  test("reference the Mock's rendered first screen when the transcript's first Observation is read", () => {
    // The Mock renders its screenshots from its UI tree, deterministically: the first observation
    // of a fresh Mock is its sign-in screen, unfocused, in the light theme.
    const digest = createHash("sha256")
      .update(renderScreen(new MockApp().tree(), { dark: false, focusedNodeId: null }))
      .digest("hex");
    const first = requests.find((e) => e.id === "rpc.device-observe.request.v1") as Entry;
    const observation = (readJson(responseOf(first)).result as Obj).screenshot;
    expect(observation).toEqual({
      id: `sha256:${digest}`,
      mediaType: "image/png",
      uri: `devicerail://assets/sha256/${digest}`,
      sha256: digest,
    });
  });

  test("keep each event identical when the same eventId appears in several fixtures", () => {
    const seen = new Map<string, Json>();
    const conflicts: string[] = [];
    for (const { e, body } of all)
      for (const v of values(body))
        if (isObj(v) && typeof v.eventId === "string" && "payload" in v) {
          const prev = seen.get(v.eventId);
          if (prev === undefined) seen.set(v.eventId, v);
          else if (!Bun.deepEquals(prev, v, true)) conflicts.push(`${e.id}: ${v.eventId}`);
        }
    expect(seen.size).toBeGreaterThan(0);
    expect(conflicts).toEqual([]);
  });

  test("name one Session per transcript when the recorded and the schema-only fixtures are read", () => {
    // Recorded: every fixture replayed on top of session.start binds the Session of the one Mock
    // transcript run. Schema-only: the WebSocket pairs describe one illustrative Session.
    const recorded = new Set(
      requests.flatMap((e) =>
        Object.values(e.replay?.bind ?? {})
          .filter((b) => (e.replay as Replay).before[b.step]?.method === "session.start")
          .map((b) => b.recorded),
      ),
    );
    const schemaOnly = new Set(
      requests
        .filter((e) => e.replay === null)
        .flatMap((e) => [readJson(e), readJson(responseOf(e))])
        .flatMap((body) =>
          [...values(body)].filter(isObj).flatMap((o) => (typeof o.sessionId === "string" ? [o.sessionId] : [])),
        ),
    );
    expect({ recorded: recorded.size, schemaOnly: schemaOnly.size }).toEqual({ recorded: 1, schemaOnly: 1 });
  });

  test("form one contiguous log that matches its SessionInfo when a Session is exported whole", () => {
    const whole = requests
      .filter((req) => req.method === "session.export" && !isRaw(req))
      .filter((req) => !("limit" in ((readJson(req).params ?? {}) as Obj)))
      .map((req) => readJson(responseOf(req)))
      .filter((body) => "result" in body);
    expect(whole.length).toBeGreaterThan(0);
    for (const body of whole) {
      const { session, events } = body.result as { session: Obj; events: Obj[] };
      const payloadTypes = events.map((x) => (x.payload as Obj).type);
      expect({
        sequences: events.map((x) => x.sequence),
        sessionIds: events.map((x) => x.sessionId),
        first: payloadTypes[0],
        last: payloadTypes.at(-1),
        eventCount: session.eventCount,
        lastSequence: session.lastSequence,
      }).toEqual({
        sequences: events.map((_, i) => i + 1),
        sessionIds: events.map(() => session.id as string),
        first: "sessionStarted",
        last: session.state === "ended" ? "sessionEnded" : payloadTypes.at(-1),
        eventCount: events.length,
        lastSequence: events.length,
      });
    }
  });

  test("hold preorder nodes whose roots are listed when a UiSnapshot is returned", () => {
    const snapshots = all
      .filter(({ e, body }) => e.method === "ui.snapshot.get" && "result" in body)
      .map(
        ({ body }) =>
          body.result as {
            rootStableNodeIds: string[];
            nodes: { stableNodeId: string; parentStableNodeId: string | null }[];
          },
      );
    expect(snapshots.length).toBeGreaterThan(0);
    for (const s of snapshots) expect(uiTreeProblems(s)).toEqual({ roots: s.rootStableNodeIds, problems: [] });
  });

  test("match the UiSnapshotRef digest and size when the UiSnapshot of that Observation is returned", () => {
    const refs = new Map<string, Obj>();
    for (const { body } of all)
      for (const v of values(body))
        if (isObj(v) && isObj(v.uiSnapshot ?? null)) refs.set(v.id as string, v.uiSnapshot as Obj);
    const snapshots = all
      .filter(({ e, body }) => e.method === "ui.snapshot.get" && "result" in body)
      .map(({ body }) => body.result as Obj);
    expect(snapshots.length).toBeGreaterThan(0);
    for (const s of snapshots) {
      const ref = refs.get(s.observationId as string);
      expect(ref).toBeDefined();
      const bytes = Buffer.from(uiTreeBytes(s), "utf8");
      const digest = createHash("sha256").update(bytes).digest("hex");
      expect(ref as unknown).toEqual({
        formatVersion: s.formatVersion,
        context: s.context,
        nodeCount: (s.nodes as Json[]).length,
        byteLength: bytes.length,
        evidence: {
          id: `sha256:${digest}`,
          mediaType: UI_TREE_MEDIA_TYPE,
          uri: `devicerail://assets/sha256/${digest}`,
          sha256: digest,
        },
      });
    }
  });
});

/** docs/protocol/devices-and-actions.md#tree-rules preorder walk: the roots found and every rule broken. */
function uiTreeProblems(s: {
  rootStableNodeIds: string[];
  nodes: { stableNodeId: string; parentStableNodeId: string | null }[];
}) {
  const problems: string[] = [];
  const seen = new Set<string>();
  const roots: string[] = [];
  let stack: string[] = [];
  for (const n of s.nodes) {
    if (seen.has(n.stableNodeId)) problems.push(`duplicate ${n.stableNodeId}`);
    if (n.parentStableNodeId === null) {
      roots.push(n.stableNodeId);
      stack = [];
    } else if (!seen.has(n.parentStableNodeId)) problems.push(`missing or late parent of ${n.stableNodeId}`);
    else {
      const at = stack.lastIndexOf(n.parentStableNodeId);
      if (at < 0) problems.push(`${n.stableNodeId} breaks preorder`);
      else stack = stack.slice(0, at + 1);
    }
    seen.add(n.stableNodeId);
    stack.push(n.stableNodeId);
  }
  return { roots, problems };
}

/** UI-tree Evidence bytes: compact JSON in declaration order, bounds written as floats (docs/protocol/devices-and-actions.md#how-a-tree-is-stored). */
function uiTreeBytes(s: Obj): string {
  const f64 = (n: Json | undefined) => (Number.isInteger(n) ? `${n}.0` : String(n));
  const j = JSON.stringify;
  const c = s.context as Obj;
  const nodes = (s.nodes as Obj[]).map((n) => {
    const b = n.bounds as Obj | null;
    const bounds =
      b === null ? "null" : `{"x":${f64(b.x)},"y":${f64(b.y)},"width":${f64(b.width)},"height":${f64(b.height)}}`;
    return `{"stableNodeId":${j(n.stableNodeId)},"parentStableNodeId":${j(n.parentStableNodeId)},"role":${j(n.role)},"name":${j(n.name)},"value":${j(n.value)},"identifier":${j(n.identifier)},"text":${j(n.text)},"bounds":${bounds},"enabled":${j(n.enabled)},"hittable":${j(n.hittable)}}`;
  });
  return `{"formatVersion":${j(s.formatVersion)},"observationId":${j(s.observationId)},"context":{"contextKind":${j(c.contextKind)},"contextId":${j(c.contextId)},"documentEpoch":${j(c.documentEpoch)}},"rootStableNodeIds":${j(s.rootStableNodeIds)},"nodes":[${nodes.join(",")}]}`;
}

/** JSON Pointer (RFC 6901) lookup. */
function at(node: Json, pointer: string): Json | undefined {
  let cur: Json | undefined = node;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(cur)) cur = cur[Number(key)];
    else if (isObj(cur ?? null)) cur = (cur as Obj)[key];
    else return undefined;
  }
  return cur;
}

/** Replaces every occurrence of each recorded value by its live value, inside any string. */
function substitute<T extends Json>(node: T, live: Map<string, string>): T {
  const str = (x: string) => [...live].reduce((acc, [recorded, value]) => acc.replaceAll(recorded, value), x);
  const go = (x: Json): Json =>
    typeof x === "string"
      ? str(x)
      : Array.isArray(x)
        ? x.map(go)
        : isObj(x)
          ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, go(v)]))
          : x;
  return go(node) as T;
}

/**
 * The comparable shape of one answer: volatile ids and clocks replaced (see the design note at the
 * top); v4 UUIDs outside `pinned` become `<uuid:n>` by first appearance, visiting keys in sorted order.
 * A UI-tree digest is volatile too, since the tree's bytes hold its Observation's id: it becomes
 * `<ui-tree:n>`, so that equal references must still be equal.
 */
function shape(response: unknown, pinned: Set<string>): Json {
  const tokens = new Map<string, string>();
  const token = (u: string) => {
    if (pinned.has(u)) return u;
    if (!tokens.has(u)) tokens.set(u, `<uuid:${tokens.size + 1}>`);
    return tokens.get(u) as string;
  };
  const trees = new Map<string, string>();
  for (const v of values(response as Json))
    if (isObj(v) && v.mediaType === UI_TREE_MEDIA_TYPE && typeof v.sha256 === "string" && !trees.has(v.sha256))
      trees.set(v.sha256, `<ui-tree:${trees.size + 1}>`);
  // An event-stream endpoint is a random port and bearer token: compared by its shape only.
  const digest = (x: string) =>
    x
      .replace(/^ws:\/\/127\.0\.0\.1:[1-9]\d{0,4}\/v\/[0-9a-f]{64}$/, "<event stream endpoint>")
      .replace(/[0-9a-f]{64}/g, (h) => trees.get(h) ?? h);
  const go = (x: Json): Json => {
    if (typeof x === "string") return digest(x).replace(UUID_V4_ALL, token);
    if (Array.isArray(x)) return x.map(go);
    if (!isObj(x)) return x;
    const out: Obj = {};
    for (const k of Object.keys(x).sort())
      out[k] = (k === "atMs" || k === "durationMs") && typeof x[k] === "number" ? "<ms>" : go(x[k] as Json);
    return out;
  };
  return go(normalizeVolatile(response) as Json);
}

describe("fixture replay", () => {
  for (const req of requests.filter((e) => e.replay !== null)) {
    const replay = req.replay as Replay;
    test(`reproduces ${replay.response} when ${req.id} is sent to a fresh daemon`, async () => {
      await using daemon = spawnDaemon();
      if (replay.hello !== null) {
        daemon.send({ jsonrpc: "2.0", id: "replay-hello", method: "system.hello", params: replay.hello });
        const hello = await daemon.next();
        expect({ id: hello.id, error: hello.error }).toEqual({ id: "replay-hello", error: undefined });
      }
      const live = new Map<string, string>();
      const sent: Json[] = [];
      for (const [i, step] of replay.before.entries()) {
        const msg = substitute(step, live);
        sent.push(msg);
        daemon.send(msg);
        const answer = (await daemon.next()) as unknown as Obj;
        expect({ step: i, id: answer.id }).toEqual({ step: i, id: msg.id as Json });
        for (const b of Object.values(replay.bind ?? {}).filter((x) => x.step === i)) {
          const value = at(answer, b.pointer);
          expect({ pointer: b.pointer, uuid: typeof value === "string" && UUID_V4.test(value) }).toEqual({
            pointer: b.pointer,
            uuid: true,
          });
          live.set(b.recorded, value as string);
        }
      }
      if (isRaw(req)) {
        const line = substitute(readText(req).replace(/\r?\n$/, ""), live);
        sent.push(line);
        daemon.writeRaw(`${line}\n`);
      } else {
        const msg = substitute(readJson(req), live);
        sent.push(msg);
        daemon.send(msg);
      }
      const actual = await daemon.next();
      const expected = substitute(readJson(byId.get(replay.response) as Entry), live);
      const pinned = new Set([...(JSON.stringify(sent).match(UUID_V4_ALL) ?? []), ...live.values()]);
      expect(shape(actual, pinned)).toEqual(shape(expected, pinned));
    });
  }
});
