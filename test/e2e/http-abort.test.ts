import { describe, expect, test } from "bun:test";
import { pollUntil } from "../support/wait.ts";
import { RpcSocket, ServeDaemon } from "./serve-daemon.ts";

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
    /** The first Session's id and event types, asked again until `done` accepts them. */
    const sessionFor = async (what: string, done: (types: string[]) => boolean) => {
      const { id } = await pollUntil(
        what,
        async () => {
          const id = ((await rpc.call("sessions.list")).result as { id: string }[])[0]?.id;
          const events = id
            ? ((await rpc.call("events.list", { sessionId: id })).result as { payload: { type: string } }[])
            : [];
          return { id, types: events.map((e) => e.payload.type) };
        },
        (s) => s.id !== undefined && done(s.types),
      );
      return id as string;
    };
    const sessionId = await sessionFor("the action did not start", (t) => t.includes("actionStarted"));
    abort.abort();
    expect(await pending).toBe("AbortError");
    await sessionFor("the Session did not end", (t) => t.includes("sessionEnded"));
    const events = (await rpc.call("events.list", { sessionId })).result as { payload: any }[];
    expect(events.map((e) => e.payload.type)).toEqual([
      "sessionStarted",
      "actionStarted",
      "actionCompleted",
      "sessionEnded",
    ]);
    expect(events[2]?.payload.outcome.outcome).toBe("cancelled");
    expect([events[3]?.payload.outcome, events[3]?.payload.reason]).toEqual(["shutdown", "RPC connection closed"]);
    expect((await rpc.call("session.start")).result.state).toBe("active");
  });
});
