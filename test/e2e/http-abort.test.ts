import { describe, expect, test } from "bun:test";
import { RpcSocket, ServeDaemon, within } from "./serve-daemon.ts";

describe("an HTTP device request whose client goes away", () => {
  test("is cancelled: its action completes as cancelled, its Session ends and the device is free again", async () => {
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0"], { DEVICERAIL_MOCK_HANG: "execute" });
    const rpc = await RpcSocket.connect({ port: d.port });
    await rpc.hello();
    const abort = new AbortController();
    const pending = fetch(`http://127.0.0.1:${d.port}/devices/_/actions/tap`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: '{"x":1,"y":1}',
      signal: abort.signal,
    }).catch((e: Error) => e.name);
    const sessionFor = async (done: (types: string[]) => boolean) => {
      for (;;) {
        const sessions = (await rpc.call("sessions.list")).result as { id: string }[];
        const id = sessions[0]?.id;
        const types = id ? ((await rpc.call("events.list", { sessionId: id })).result as { payload: { type: string } }[]).map((e) => e.payload.type) : [];
        if (id && done(types)) return id;
        await Bun.sleep(10);
      }
    };
    const sessionId = await within(sessionFor((t) => t.includes("actionStarted")), 10_000, "the action did not start");
    abort.abort();
    expect(await pending).toBe("AbortError");
    await within(sessionFor((t) => t.includes("sessionEnded")), 10_000, "the Session did not end");
    const events = (await rpc.call("events.list", { sessionId })).result as { payload: any }[];
    expect(events.map((e) => e.payload.type)).toEqual(["sessionStarted", "actionStarted", "actionCompleted", "sessionEnded"]);
    expect(events[2]?.payload.outcome.outcome).toBe("cancelled");
    expect([events[3]?.payload.outcome, events[3]?.payload.reason]).toEqual(["shutdown", "RPC connection closed"]);
    expect((await rpc.call("session.start")).result.state).toBe("active");
  });
});
