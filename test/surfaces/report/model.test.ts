import { describe, expect, test } from "bun:test";
import type { TestEvent } from "../../../src/protocol/types/event.ts";
import type { UiSnapshot } from "../../../src/protocol/types/ui.ts";
import { type ReportSource, buildModel, evidenceOf, modelChunks } from "../../../src/surfaces/report/model.ts";
import { contentSecurityPolicy, pageChunks, pagePolicy, renderPage } from "../../../src/surfaces/report/page.ts";
import { greyPng } from "../../support/png.ts";

const SESSION = "5a0c0000-0000-4000-8000-000000000001";
const TREE = "application/vnd.devicerail.ui-tree+json;version=1";
const asset = (sha: string, mediaType: string) => ({
  id: `sha256:${sha}`,
  mediaType,
  uri: `devicerail://assets/sha256/${sha}`,
  sha256: sha,
});

const png = greyPng;

const snapshot = (observationId: string, label: string): UiSnapshot => ({
  formatVersion: 1,
  observationId,
  context: { contextKind: "native", contextId: "app", documentEpoch: "1" },
  rootStableNodeIds: ["root"],
  nodes: [
    {
      stableNodeId: "root",
      parentStableNodeId: null,
      role: "Button",
      name: null,
      value: null,
      identifier: "go",
      text: label,
      bounds: { x: 0, y: 0, width: 10, height: 10 },
      enabled: true,
      hittable: true,
    },
  ],
});

/** Two observations of the same screen (equal trees, different digests) and a third, different one. */
function fixture(): { events: TestEvent[]; store: Map<string, Uint8Array> } {
  const store = new Map<string, Uint8Array>();
  const events: TestEvent[] = [];
  ["Go </script><script>alert(1)</script>", "Go </script><script>alert(1)</script>", "Done"].forEach((label, i) => {
    const id = `00000000-0000-4000-8000-00000000000${i}`;
    const treeSha = String(i).repeat(64);
    store.set(treeSha, new TextEncoder().encode(JSON.stringify(snapshot(id, label))));
    events.push({
      eventId: crypto.randomUUID(),
      sessionId: SESSION,
      sequence: i + 1,
      deviceId: "mock-1",
      atMs: 1_000 + i,
      payload: {
        type: "observationCaptured",
        observation: {
          id,
          deviceId: "mock-1",
          capturedAtMs: 1_000 + i,
          viewport: { width: 1280, height: 720, scaleFactor: 1 },
          screenshot: asset("f".repeat(64), "image/png"),
          uiSnapshot: {
            formatVersion: 1,
            context: { contextKind: "native", contextId: "app", documentEpoch: "1" },
            nodeCount: 1,
            byteLength: 10,
            evidence: asset(treeSha, TREE),
          },
          metadata: { foregroundApp: "com.example", screen: "login", uiStates: {}, private: "not needed" },
        },
      },
    } as TestEvent);
  });
  return { events, store };
}

async function model() {
  const { events, store } = fixture();
  store.set("f".repeat(64), await png(1280, 720));
  const source: ReportSource = {
    head: async () => ({
      session: { id: SESSION, state: "ended", startedAtMs: 1_000, endedAtMs: 2_000, eventCount: 3, lastSequence: 3 },
      summary: null,
    }),
    pages: async function* () {
      yield events;
    },
    device: async () => ({ id: "mock-1", name: "Mock", platform: { kind: "mock" }, osVersion: "0.1", connected: true }),
    evidence: async (sha) => store.get(sha) ?? null,
  };
  return buildModel(source, SESSION, { daemonVersion: "test" });
}

describe("report model", () => {
  test("names each screenshot and tree the events reference once", () => {
    expect(evidenceOf(fixture().events)).toEqual({
      screenshots: ["f".repeat(64)],
      trees: ["0".repeat(64), "1".repeat(64), "2".repeat(64)],
    });
  });

  test("embeds one downscaled JPEG per distinct screenshot and keeps repeated trees once", async () => {
    const m = await model();
    const img = m.images["f".repeat(64)];
    expect([
      img?.width,
      img?.height,
      img?.sourceWidth,
      img?.sourceHeight,
      img?.full,
      img?.src.startsWith("data:image/jpeg;base64,"),
    ]).toEqual([480, 270, 1280, 720, null, true]);
    expect(typeof m.trees["0".repeat(64)]).toBe("object");
    expect(m.trees["1".repeat(64)]).toBe("0".repeat(64));
    expect((m.trees["2".repeat(64)] as { text: string }[])[0]?.text).toBe("Done");
  });

  test("keeps of each observation what the page reads: digests, viewport, foreground", async () => {
    const o = ((await model()).events[0]?.payload as { observation: Record<string, unknown> }).observation;
    expect(o).toEqual({
      id: "00000000-0000-4000-8000-000000000000",
      deviceId: "mock-1",
      capturedAtMs: 1_000,
      viewport: { width: 1280, height: 720, scaleFactor: 1 },
      screenshot: { sha256: "f".repeat(64) },
      uiSnapshot: { evidence: { sha256: "0".repeat(64) } },
      metadata: { foregroundApp: "com.example", screen: "login", uiStates: {} },
    });
  });
});

describe("report page", () => {
  test("embeds the model so that no text from the device can end its script element", async () => {
    const html = renderPage(await model());
    const data = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)?.[1] as string;
    expect(data).not.toContain("</script");
    expect(JSON.parse(data).trees["0".repeat(64)][0].text).toBe("Go </script><script>alert(1)</script>");
    expect(html.match(/<script/g)?.length).toBe(2);
  });

  test("allows a file no network, and the live page only the daemon and its event plane", async () => {
    const m = await model();
    expect(contentSecurityPolicy(m)).toMatch(
      /^default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-[A-Za-z0-9+/=]{44}'; connect-src 'none'; base-uri 'none'; form-action 'none'$/,
    );
    const live = {
      ...m,
      live: { endpoint: `ws://127.0.0.1:41867/v/${"a".repeat(64)}`, streamEpoch: "e", evidenceBase: "/evidence/" },
    };
    expect(contentSecurityPolicy(live)).toContain(
      "img-src data: 'self'; style-src 'unsafe-inline'; script-src 'sha256-",
    );
    expect(contentSecurityPolicy(live)).toContain("connect-src 'self' ws://127.0.0.1:41867;");
    expect(renderPage(m)).toContain(
      `<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(m).replace(/'/g, "&#39;")}">`,
    );
  });
});

describe("report stream", () => {
  test("writes each page of events before the next is read, and the same page as renderPage, when the Session comes in pages", async () => {
    const { events, store } = fixture();
    store.set("f".repeat(64), await png(1280, 720));
    const asked: string[] = [];
    const session = {
      id: SESSION,
      state: "ended" as const,
      startedAtMs: 1_000,
      endedAtMs: 2_000,
      eventCount: 3,
      lastSequence: 3,
    };
    const source: ReportSource = {
      head: async () => ({ session, summary: null }),
      pages: async function* () {
        for (const e of events) {
          asked.push(`page ${e.sequence}`);
          yield [e];
        }
      },
      device: async () => ({
        id: "mock-1",
        name: "Mock",
        platform: { kind: "mock" },
        osVersion: "0.1",
        connected: true,
      }),
      evidence: async (sha) => {
        asked.push(`evidence ${sha.slice(0, 1)}`);
        return store.get(sha) ?? null;
      },
    };
    const head = await source.head(SESSION);
    const chunks = pageChunks(modelChunks(source, head, { daemonVersion: "test" }), {
      policy: pagePolicy(null, false),
      daemonVersion: "test",
      sessionId: SESSION,
    });
    let html = "";
    const seenWhen: Record<number, string[]> = {};
    for await (const chunk of chunks) {
      html += chunk;
      for (const seq of [1, 2, 3])
        if (!seenWhen[seq] && chunk.includes(`"sequence":${seq},`)) seenWhen[seq] = [...asked];
    }
    // Each page is written before the next is asked for; evidence is read after the events.
    expect(seenWhen).toEqual({ 1: ["page 1"], 2: ["page 1", "page 2"], 3: ["page 1", "page 2", "page 3"] });
    expect(asked).toEqual(["page 1", "page 2", "page 3", "evidence f", "evidence 0", "evidence 1", "evidence 2"]);
    const data = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)?.[1] as string;
    const model = JSON.parse(data);
    expect(html).toBe(renderPage(model));
    expect(model).toEqual({
      ...(await buildModel({ ...source, head: async () => ({ session, summary: null }) }, SESSION, {
        daemonVersion: "test",
      })),
      generatedAtMs: model.generatedAtMs,
    });
  });
});
