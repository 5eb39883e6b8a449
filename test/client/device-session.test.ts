import { describe, expect, test } from "bun:test";
import type { Answer, Channel } from "../../src/client/client.ts";
import { clientOver } from "../../src/client/client.ts";
import { LEASE_RETRY_MS, startSession, withDeviceSession } from "../../src/client/device-session.ts";
import { RemoteError } from "../../src/client/remote-error.ts";
import { errorObject } from "../../src/protocol/errors.ts";

const SESSION = { id: "s-1", state: "active", startedAtMs: 1, endedAtMs: null, eventCount: 0, lastSequence: 0 };

/** A daemon whose device is busy for the first `busy` session.start calls; records every request. */
function fakeDaemon(busy: number) {
  const sent: { method: string; params: unknown }[] = [];
  let starts = 0;
  const channel: Channel = {
    async send(_id, method, params) {
      sent.push({ method, params });
      const ok = (result: unknown): Answer => ({ ok: true, result, json: JSON.stringify(result) });
      if (method === "session.start")
        return ++starts <= busy ? { ok: false, error: errorObject("device_in_use", { details: {} }) } : ok(SESSION);
      return ok(method === "session.end" ? { ...SESSION, state: "ended" } : null);
    },
    close: async () => {},
  };
  return { client: clientOver(channel), sent, methods: () => sent.map((s) => s.method) };
}

describe("the one lease-wait policy", () => {
  test("a busy device is asked for again every LEASE_RETRY_MS until it is free", async () => {
    const d = fakeDaemon(3);
    const started = performance.now();
    expect((await startSession(d.client, { waitMs: 2_000 })).id).toBe("s-1");
    expect(performance.now() - started).toBeGreaterThanOrEqual(3 * LEASE_RETRY_MS - 10);
    expect(d.methods().filter((m) => m === "session.start")).toHaveLength(4);
  });

  test("past the caller's deadline the device_in_use answer is the caller's", async () => {
    const d = fakeDaemon(1_000);
    const e = await startSession(d.client, { waitMs: 250 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RemoteError);
    expect((e as RemoteError).data.code).toBe("device_in_use");
    expect(d.methods().filter((m) => m === "session.start").length).toBeLessThanOrEqual(4);
  });

  test("admit runs once, between device.connect and session.start, and its refusal starts no Session", async () => {
    const d = fakeDaemon(1);
    let admitted = 0;
    await startSession(d.client, { admit: async () => void admitted++ });
    expect(admitted).toBe(1);
    expect(d.methods()).toEqual(["device.connect", "session.start", "device.connect", "session.start"]);
    const refused = fakeDaemon(0);
    await expect(
      startSession(refused.client, { admit: () => Promise.reject(new Error("no such action")) }),
    ).rejects.toThrow("no such action");
    expect(refused.methods()).toEqual(["device.connect"]);
  });

  test("withDeviceSession ends the Session completed, or failed with the error's text", async () => {
    const d = fakeDaemon(0);
    expect(await withDeviceSession(d.client, async (s) => s.id)).toBe("s-1");
    expect(d.sent.at(-1)).toEqual({ method: "session.end", params: { outcome: "completed" } });
    await expect(withDeviceSession(d.client, () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(d.sent.at(-1)).toEqual({ method: "session.end", params: { outcome: "failed", reason: "boom" } });
  });

  test("an aborted call sends request.cancel for its id", async () => {
    const sent: { id: number; method: string; params: unknown }[] = [];
    const pending = Promise.withResolvers<Answer>();
    const client = clientOver({
      send: (id, method, params) => {
        sent.push({ id, method, params });
        return method === "request.cancel" ? Promise.resolve({ ok: true, result: {}, json: "{}" }) : pending.promise;
      },
      close: async () => {},
    });
    const abort = new AbortController();
    const answer = client.call("device.observe", undefined, { signal: abort.signal });
    abort.abort();
    expect(sent[1]).toEqual({ id: 2, method: "request.cancel", params: { requestId: 1 } });
    pending.resolve({ ok: false, error: errorObject("request_cancelled", { details: {} }) });
    await expect(answer).rejects.toBeInstanceOf(RemoteError);
  });
});
