/**
 * Golden protocol fixtures (fixtures/protocol): every file is in the manifest and validates against
 * the generated JSON Schemas; every method has a success pair and an rpcFailure; the values are
 * internally consistent (canonical AssetRefs, UI-tree preorder and digest, one Session log); and each
 * replayable request reproduces its response on a fresh daemon.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { OUT_DIR, methodSchemaId, schemaId } from "../../scripts/gen-protocol.ts";
import { METHOD_NAMES } from "../../src/protocol/methods.ts";
import { ROOT, normalizeVolatile, spawnDaemon } from "../support/daemon.ts";

const FIXTURES = join(ROOT, "fixtures");
const PROTOCOL_DIR = join(FIXTURES, "protocol");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UUID_ANY_CASE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UI_TREE_MEDIA_TYPE = "application/vnd.devicerail.ui-tree+json;version=1";
/** The Mock's fixed 1×1 RGBA screenshot (09 §1). */
const MOCK_PNG_HEX =
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63089af3ea3f0005f402d88de408210000000049454e44ae426082";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };
interface Replay {
  hello: Obj | null;
  before: Obj[];
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

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv.addFormat("uuid", UUID);
  for (const dir of ["schema", "methods"])
    for (const file of readdirSync(join(OUT_DIR, dir)).filter((f) => f.endsWith(".json")).sort())
      ajv.addSchema(JSON.parse(readFileSync(join(OUT_DIR, dir, file), "utf8")));
  return ajv;
}

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
        return e.kind !== (e.method && (METHOD_NAMES as string[]).includes(e.method) ? `${camel(e.method)}Request` : "rpcRequest");
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
      isRequest(e) ? (e.replay === null) !== (typeof e.replayNote === "string" && e.replayNote.length > 0) : e.replay !== null || "replayNote" in e,
    );
    expect(wrong.map((e) => e.id)).toEqual([]);
  });

  test("covers a success request, a success response and an rpcFailure when each of the 24 methods is checked", () => {
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
    expect(coverage).toEqual(METHOD_NAMES.map((method) => ({ method, successRequest: true, successResponse: true, rpcFailure: true })));
  });

  test("replays the success pairs that need no device, Session or WebSocket when the replayable set is listed", () => {
    const replayedSuccess = requests
      .filter((e) => e.replay !== null && responseOf(e).kind !== "rpcFailure")
      .map((e) => e.method)
      .filter((m, i, all) => all.indexOf(m) === i)
      .sort();
    expect(replayedSuccess).toEqual(["devices.list", "request.cancel", "sessions.list", "system.describe", "system.hello"]);
  });
});

describe("fixture schemas", () => {
  const ajv = newAjv();

  test("exempts only raw request lines when an entry has no schema", () => {
    expect(entries.filter((e) => e.schema === null).map((e) => e.kind).filter((k) => k !== "rawLine")).toEqual([]);
  });

  test("expects a schema rejection only when the daemon rejects the request's shape", () => {
    const marked = entries.filter((e) => e.schemaValid === false);
    const wrong = marked.filter((e) => {
      if (!isRequest(e)) return true;
      const res = readJson(responseOf(e));
      return !["invalid_request", "invalid_params"].includes(((res.error as Obj | undefined)?.data as Obj | undefined)?.code as string);
    });
    expect(marked.length).toBeGreaterThan(0);
    expect(wrong.map((e) => e.id)).toEqual([]);
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
  const all = entries.filter((e) => !isRaw(e)).map((e) => ({ e, body: readJson(e) }));

  test("echo the request id when a response answers a decodable request", () => {
    const wrong = requests.flatMap((req) => {
      const res = readJson(responseOf(req));
      const decodeFailure = isObj(res.error ?? null) && ["parse_error", "invalid_request"].includes(((res.error as Obj).data as Obj).code as string);
      const expected = decodeFailure ? null : readJson(req).id;
      return res.id === expected ? [] : [{ request: req.id, expected, actual: res.id }];
    });
    expect(wrong).toEqual([]);
  });

  test("use lowercase v4 UUIDs when a string looks like a UUID", () => {
    const bad = all.flatMap(({ e, body }) =>
      [...values(body)].filter((v): v is string => typeof v === "string" && UUID_ANY_CASE.test(v) && !UUID_V4.test(v)).map((v) => `${e.id}: ${v}`),
    );
    expect(bad).toEqual([]);
  });

  test("use canonical AssetRefs when an object carries an evidence reference", () => {
    const refs = all.flatMap(({ body }) => [...values(body)].filter((v): v is Obj => isObj(v) && "sha256" in v && "uri" in v));
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

  test("reference the digest of the Mock PNG when an Observation of mock-1 has a screenshot", () => {
    const digest = createHash("sha256").update(Buffer.from(MOCK_PNG_HEX, "hex")).digest("hex");
    const shots = all.flatMap(({ body }) =>
      [...values(body)].filter((v): v is Obj => isObj(v) && v.deviceId === "mock-1" && "screenshot" in v).map((o) => o.screenshot),
    );
    expect(shots.length).toBeGreaterThan(0);
    const expected = { id: `sha256:${digest}`, mediaType: "image/png", uri: `devicerail://assets/sha256/${digest}`, sha256: digest };
    expect(shots).toEqual(shots.map(() => expected));
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
      .map(({ body }) => body.result as { rootStableNodeIds: string[]; nodes: { stableNodeId: string; parentStableNodeId: string | null }[] });
    expect(snapshots.length).toBeGreaterThan(0);
    for (const s of snapshots) expect(uiTreeProblems(s)).toEqual({ roots: s.rootStableNodeIds, problems: [] });
  });

  test("match the UiSnapshotRef digest and size when the UiSnapshot of that Observation is returned", () => {
    const refs = new Map<string, Obj>();
    for (const { body } of all)
      for (const v of values(body)) if (isObj(v) && isObj(v.uiSnapshot ?? null)) refs.set(v.id as string, v.uiSnapshot as Obj);
    const snapshots = all.filter(({ e, body }) => e.method === "ui.snapshot.get" && "result" in body).map(({ body }) => body.result as Obj);
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
        evidence: { id: `sha256:${digest}`, mediaType: UI_TREE_MEDIA_TYPE, uri: `devicerail://assets/sha256/${digest}`, sha256: digest },
      });
    }
  });
});

/** 08 §2.2 preorder walk: the roots found and every rule broken. */
function uiTreeProblems(s: { rootStableNodeIds: string[]; nodes: { stableNodeId: string; parentStableNodeId: string | null }[] }) {
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

/** UI-tree Evidence bytes: compact JSON in declaration order, bounds written as floats (08 §2.1). */
function uiTreeBytes(s: Obj): string {
  const f64 = (n: Json | undefined) => (Number.isInteger(n) ? `${n}.0` : String(n));
  const j = JSON.stringify;
  const c = s.context as Obj;
  const nodes = (s.nodes as Obj[]).map((n) => {
    const b = n.bounds as Obj | null;
    const bounds = b === null ? "null" : `{"x":${f64(b.x)},"y":${f64(b.y)},"width":${f64(b.width)},"height":${f64(b.height)}}`;
    return `{"stableNodeId":${j(n.stableNodeId)},"parentStableNodeId":${j(n.parentStableNodeId)},"role":${j(n.role)},"name":${j(n.name)},"value":${j(n.value)},"identifier":${j(n.identifier)},"text":${j(n.text)},"bounds":${bounds},"enabled":${j(n.enabled)},"hittable":${j(n.hittable)}}`;
  });
  return `{"formatVersion":${j(s.formatVersion)},"observationId":${j(s.observationId)},"context":{"contextKind":${j(c.contextKind)},"contextId":${j(c.contextId)},"documentEpoch":${j(c.documentEpoch)}},"rootStableNodeIds":${j(s.rootStableNodeIds)},"nodes":[${nodes.join(",")}]}`;
}

describe("fixture replay", () => {
  for (const req of requests.filter((e) => e.replay !== null)) {
    const replay = req.replay as Replay;
    test(`reproduces ${replay.response} when ${req.id} is sent to a fresh daemon`, async () => {
      const expected = readJson(byId.get(replay.response) as Entry);
      const daemon = spawnDaemon();
      try {
        if (replay.hello !== null) {
          daemon.send({ jsonrpc: "2.0", id: "replay-hello", method: "system.hello", params: replay.hello });
          const hello = await daemon.next();
          expect({ id: hello.id, error: hello.error }).toEqual({ id: "replay-hello", error: undefined });
        }
        for (const before of replay.before) {
          daemon.send(before);
          await daemon.next();
        }
        if (isRaw(req)) daemon.writeRaw(`${readText(req).replace(/\r?\n$/, "")}\n`);
        else daemon.send(readJson(req));
        const actual = await daemon.next();
        expect(normalizeVolatile(actual)).toEqual(normalizeVolatile(expected));
      } finally {
        await daemon.close();
      }
    });
  }
});
