/**
 * A peer that vanishes without a FIN or a RST (cable pulled, NAT entry dropped) is found by TCP
 * keepalive. The peer lives in a network namespace joined to this one by a veth pair; taking its
 * link down makes it vanish for real, so nothing on the daemon's side sees a close.
 */
import { describe, expect, test } from "bun:test";
import { RawNdjsonPeer } from "../support/raw-peer.ts";
import { helloParams } from "../support/daemon.ts";
import { ServeDaemon } from "./serve-daemon.ts";

const TOKEN = "half-open-test-token-0123456789";
const KEEPALIVE_MS = 1_000;

/** Network namespaces need root (or password-less sudo) and iproute2's ip. */
const AS_ROOT: string[] | null =
  process.getuid?.() === 0 ? [] : Bun.which("sudo") && Bun.spawnSync(["sudo", "-n", "true"], { stderr: "ignore" }).exitCode === 0 ? ["sudo", "-n"] : null;

function netnsProblem(): string | null {
  if (AS_ROOT === null) return "needs root or password-less sudo for ip netns";
  if (!Bun.which("ip")) return "needs ip (Debian package iproute2)";
  return null;
}

const run = (cmd: string[]) => {
  const r = Bun.spawnSync([...(AS_ROOT ?? []), ...cmd], { stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed: ${r.stderr.toString()}`);
};

/** A namespace `peer` with address .2 behind a veth pair whose host end has .1; removed on dispose. */
function peerNamespace() {
  // Random names and subnet, so test runs on one machine at the same time never share a link or a route.
  const tag = crypto.getRandomValues(new Uint8Array(3)).reduce((s, b) => s + b.toString(16).padStart(2, "0"), "");
  const ns = `drt${tag}`;
  const [host, peer] = [`drh${tag}`, `drp${tag}`];
  const [a, b] = crypto.getRandomValues(new Uint8Array(2));
  const net = `10.${100 + ((a as number) % 150)}.${b}`;
  run(["ip", "netns", "add", ns]);
  const dispose = () => {
    Bun.spawnSync([...(AS_ROOT ?? []), "ip", "link", "del", host], { stderr: "ignore" });
    Bun.spawnSync([...(AS_ROOT ?? []), "ip", "netns", "del", ns], { stderr: "ignore" });
  };
  try {
    run(["ip", "link", "add", host, "type", "veth", "peer", "name", peer]);
    run(["ip", "link", "set", peer, "netns", ns]);
    run(["ip", "addr", "add", `${net}.1/24`, "dev", host]);
    run(["ip", "link", "set", host, "up"]);
    run(["ip", "netns", "exec", ns, "ip", "addr", "add", `${net}.2/24`, "dev", peer]);
    run(["ip", "netns", "exec", ns, "ip", "link", "set", peer, "up"]);
    run(["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"]);
  } catch (err) {
    dispose();
    throw err;
  }
  return { ns, peer, hostAddress: `${net}.1`, vanish: () => run(["ip", "netns", "exec", ns, "ip", "link", "set", peer, "down"]), [Symbol.dispose]: dispose };
}

/** Runs in the namespace: authenticates, leases the device in a Session, says "leased", then waits forever. */
const peerScript = (host: string, port: number) => `
const net = require("node:net");
const s = net.connect(${port}, ${JSON.stringify(host)}, () => {
  s.write("DEVICERAIL-TOKEN ${TOKEN}\\n");
  const send = (id, method, params) => s.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\\n");
  send(1, "system.hello", ${JSON.stringify(helloParams())});
  send(2, "device.connect");
  send(3, "session.start");
});
let text = "";
s.on("data", (d) => {
  text += d;
  if (text.split("\\n").length > 3 && !text.includes('"error"')) { process.stdout.write("leased\\n"); text = "#"; }
});
setInterval(() => {}, 1000);
`;

const problem = netnsProblem();
const runIt = problem === null || process.env.CI === "true";

describe("a peer that vanishes without closing", () => {
  test.skipIf(!runIt)("has its Session ended and its device freed by TCP keepalive when its network disappears", async () => {
    if (problem) throw new Error(`this test ${problem}; it must run in CI`);
    using space = peerNamespace();
    await using d = await ServeDaemon.start(["--listen", `${space.hostAddress}:0`], { DEVICERAIL_TOKEN: TOKEN, DEVICERAIL_TCP_KEEPALIVE_MS: String(KEEPALIVE_MS) });
    const client = Bun.spawn([...(AS_ROOT ?? []), "ip", "netns", "exec", space.ns, process.execPath, "-e", peerScript(space.hostAddress, d.port)], { stdout: "pipe", stderr: "pipe" });
    try {
      const reader = client.stdout.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toBe("leased\n");
      const checker = await RawNdjsonPeer.connect({ port: d.port, host: space.hostAddress });
      checker.socket.write(`DEVICERAIL-TOKEN ${TOKEN}\n`);
      await checker.call("system.hello", helloParams());
      const victim = (await checker.call("sessions.list")).result.find((s: { state: string }) => s.state === "active");
      expect(victim).toBeDefined();
      expect((await checker.call("session.start")).error.data.code).toBe("device_in_use");

      space.vanish();
      const t0 = performance.now();
      let freedMs = -1;
      while (performance.now() - t0 < 30_000) {
        const r = await checker.call("session.start");
        if (r.result) {
          freedMs = performance.now() - t0;
          break;
        }
        await new Promise<void>((resolve) => setTimeout(resolve, 100));
      }
      console.log(`half-open: vanished peer's device freed after ${freedMs.toFixed(0)} ms (keepalive ${KEEPALIVE_MS} ms)`);
      expect(freedMs).toBeGreaterThan(KEEPALIVE_MS);
      expect(freedMs).toBeLessThan(KEEPALIVE_MS + 15_000);
      const events = (await checker.call("events.list", { sessionId: victim.id })).result;
      expect(events.at(-1).payload).toEqual({ type: "sessionEnded", outcome: "shutdown", reason: "RPC connection closed" });
      checker.end();
    } finally {
      client.kill("SIGKILL");
      await client.exited;
    }
  }, 60_000);
});
