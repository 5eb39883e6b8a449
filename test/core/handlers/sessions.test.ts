import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { coreHarness } from "../../support/core-harness.ts";

const FEATURES = [
  "events.snapshot.v1",
  "request.control.v1",
  "device.routing.v1",
  "observation.uiSnapshot.v1",
  "verdict.record.v1",
  "session.export.page.v1",
];

/** The shared core harness, every connection offering FEATURES (up to 1.`maxMinor`). */
async function setup(evidenceInlineBytes?: number) {
  const h = await coreHarness({ evidenceInlineBytes });
  return { ...h, connect: (maxMinor = 5) => h.connect(FEATURES, maxMinor) };
}

describe("Session handlers over a fake driver", () => {
  test("session.end answers session_busy while an observation is in flight, and the cancelled observation leaves an error event", async () => {
    const s = await setup();
    try {
      const c = await s.connect();
      await c.ask("device.connect");
      const sessionId = (await c.ask("session.start")).result.id;
      s.driver.hangObserve = true;
      // Admission is synchronous: the observation is in flight once call() returns.
      const observe = c.call("device.observe");
      expect((await c.ask("session.end")).error.data).toEqual({
        code: "session_busy",
        message: `session ${sessionId} still has 1 observation(s) in flight`,
        retryable: true,
        details: { inFlightObservations: 1, sessionId },
      });
      expect((await c.ask("request.cancel", { requestId: observe.id })).result.status).toBe("requested");
      const cancelled = await observe.response;
      expect(cancelled.error.data).toEqual({
        code: "request_cancelled",
        message: "request was cancelled: Requested",
        retryable: false,
        details: { reason: "requested" },
      });
      const events = (await c.ask("events.list", { sessionId })).result;
      expect(events.map((e: any) => e.payload.type)).toEqual(["sessionStarted", "error"]);
      expect(events[1].payload.error).toEqual(cancelled.error.data);
      expect(events[1].requestId).toBe(observe.id);
      expect((await c.ask("session.end")).result.state).toBe("ended");
    } finally {
      s.cleanup();
    }
  });

  test("an action past its actionTimeoutMs is timedOut in the log and action_timed_out on the wire", async () => {
    const s = await setup();
    try {
      const c = await s.connect();
      await c.ask("device.connect");
      const sessionId = (await c.ask("session.start")).result.id;
      s.driver.hangExecute = true;
      const callId = "0f6c2f84-6d0e-4a43-9a8e-2b1f0e5c7d11";
      const r = await c.ask("device.execute", { id: callId, name: "tap", arguments: {}, actionTimeoutMs: 30 });
      expect(r.error.data).toEqual({
        code: "action_timed_out",
        message: "Action timed out after 30 ms",
        retryable: true,
        details: { scope: "action", timeoutMs: 30 },
      });
      const events = (await c.ask("events.list", { sessionId })).result;
      expect(events[2].payload).toEqual({
        type: "actionCompleted",
        callId,
        outcome: {
          outcome: "timedOut",
          error: {
            code: "action_timeout",
            message: "Action timed out after 30 ms",
            retryable: true,
            details: { scope: "action", timeoutMs: 30 },
          },
          timeoutMs: 30,
        },
      });
    } finally {
      s.cleanup();
    }
  });

  for (const tier of ["inline", "file"] as const) {
    test(`ui.snapshot.get returns the stored tree, refuses other Sessions' observations and detects corrupted bytes (${tier} evidence)`, async () => {
      const s = await setup(tier === "file" ? 0 : undefined);
      try {
        const a = await s.connect();
        await a.ask("device.connect");
        await a.ask("session.start");
        const obs = (await a.ask("device.observe")).result;
        expect(obs.uiSnapshot).toEqual({
          formatVersion: 1,
          context: { contextKind: "native", contextId: "fake-app", documentEpoch: "1" },
          nodeCount: 2,
          byteLength: expect.any(Number),
          evidence: expect.objectContaining({ mediaType: "application/vnd.devicerail.ui-tree+json;version=1" }),
        });
        const snap = (await a.ask("ui.snapshot.get", { observationId: obs.id })).result;
        expect(snap).toEqual(
          expect.objectContaining({ formatVersion: 1, observationId: obs.id, rootStableNodeIds: ["root"] }),
        );
        expect(snap.nodes.map((n: any) => n.stableNodeId)).toEqual(["root", "ok"]);
        await a.ask("session.end");
        await a.ask("session.start");
        expect((await a.ask("ui.snapshot.get", { observationId: obs.id })).error.data.code).toBe(
          "ui_snapshot_not_found",
        );
        const again = (await a.ask("device.observe")).result;
        // Same tree, other observation id: different bytes, its own object. Corrupt it where it is stored.
        const sha = again.uiSnapshot.evidence.sha256;
        if (tier === "file") writeFileSync(s.objects.pathOf(sha), "{}");
        else {
          expect(s.objects.has(sha)).toBe(false);
          s.raw.run("UPDATE evidence SET inline_bytes = ? WHERE sha256 = ? AND inline_bytes IS NOT NULL", [
            new TextEncoder().encode("{}"),
            sha,
          ]);
          expect(s.raw.query("SELECT changes() AS n").get()).toEqual({ n: 1 });
        }
        expect((await a.ask("ui.snapshot.get", { observationId: again.id })).error.data).toEqual({
          code: "invalid_ui_snapshot",
          message: "the stored UI snapshot is invalid",
          retryable: false,
          details: { observationId: again.id },
        });
      } finally {
        s.cleanup();
      }
    });
  }

  test("a 1.4 connection cannot read a Session holding a UI snapshot, and is told which event needs 1.5", async () => {
    const s = await setup();
    try {
      const a = await s.connect();
      await a.ask("device.connect");
      const sessionId = (await a.ask("session.start")).result.id;
      await a.ask("device.observe");
      const old = await s.connect(4);
      for (const [method, params] of [
        ["events.list", { sessionId }],
        ["session.export", { sessionId }],
      ] as const) {
        const r = await old.ask(method, params);
        expect(r.error.data).toEqual({
          code: "session_protocol_incompatible",
          message: "the Session contains an event that requires a newer protocol",
          retryable: false,
          details: {
            eventId: expect.any(String),
            eventSequence: 2,
            method,
            requiredProtocol: { major: 1, minor: 5 },
            selectedProtocol: { major: 1, minor: 4 },
            sessionId,
          },
        });
      }
      expect((await old.ask("events.list", { sessionId, limit: 1 })).result.map((e: any) => e.sequence)).toEqual([1]);
    } finally {
      s.cleanup();
    }
  });

  test("a second connection cannot start a Session on a leased device and gets it once the first closes", async () => {
    const s = await setup();
    try {
      const a = await s.connect();
      const b = await s.connect();
      await a.ask("device.connect");
      const sessionId = (await a.ask("session.start")).result.id;
      expect((await b.ask("session.start")).error.data).toEqual({
        code: "device_in_use",
        message: "device is leased by another owner: fake-1",
        retryable: true,
        details: { deviceId: "fake-1" },
      });
      expect((await b.ask("device.disconnect")).error.data.code).toBe("device_in_use");
      await s.dispatcher.close(a.conn, "RPC connection closed");
      expect(s.core.log.info(sessionId)?.state).toBe("ended");
      const last = s.core.log.read(sessionId).at(-1);
      expect(last?.payload).toEqual({ type: "sessionEnded", outcome: "shutdown", reason: "RPC connection closed" });
      expect((await b.ask("session.start")).result.state).toBe("active");
    } finally {
      s.cleanup();
    }
  });
});
