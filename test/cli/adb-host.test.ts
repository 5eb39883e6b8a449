import { describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import {
  hostRequest,
  listeningAddresses,
  parseDevices,
  parseProcNetTcp,
  parseSsListen,
} from "../../src/cli/adb-host.ts";

// Recorded from Linux 6.x: a 0.0.0.0 listener, a 127.0.0.1 listener, and an established connection.
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:13AD 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 229 1 00000000268e8490 100 0 0 10 0
   1: 0100007F:13AD 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 230 1 00000000268e8491 100 0 0 10 0
   2: 0100007F:13AD 0100007F:B308 01 00000000:00000000 03:00001499 00000000     0        0 0 3 00000000e6a5c58d
   3: 0100007F:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 231 1 00000000268e8492 100 0 0 10 0
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:13AD 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 00000000000000000000000000000000:13AD 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
   2: 0000000000000000FFFF00000100007F:13AD 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3 1 0 100 0 0 10 0
`;

describe("listening addresses", () => {
  test("parseProcNetTcp returns the LISTEN sockets of the port in IPv4 and IPv6 tables", () => {
    expect(parseProcNetTcp(TCP, 5037, false)).toEqual(["0.0.0.0", "127.0.0.1"]);
    expect(parseProcNetTcp(TCP6, 5037, true)).toEqual(["::1", "::", "::ffff:127.0.0.1"]);
    expect(parseProcNetTcp(TCP, 5038, false)).toEqual([]);
  });

  test("parseSsListen reads ss -ltn's local address column", () => {
    const ss = `State  Recv-Q Send-Q Local Address:Port Peer Address:PortProcess
LISTEN 0      128          0.0.0.0:2024      0.0.0.0:*
LISTEN 0      4096       127.0.0.1:5037      0.0.0.0:*
LISTEN 0      4096           [::1]:5037         [::]:*
LISTEN 0      4096               *:5037            *:*
`;
    expect(parseSsListen(ss, 5037)).toEqual(["127.0.0.1", "::1", "0.0.0.0"]);
  });

  test("listeningAddresses finds a loopback listener of this process", async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    try {
      const port = (s.address() as { port: number }).port;
      expect(listeningAddresses(port)).toEqual(["127.0.0.1"]);
    } finally {
      s.close();
    }
  });
});

describe("adb host requests", () => {
  test("parseDevices splits serial and state, keeping a state's reason", () => {
    expect(
      parseDevices(
        "emulator-5554\tdevice\nR58M\tunauthorized\n1-1\tno permissions (user in plugdev group; see [http://x])\n",
      ),
    ).toEqual([
      { serial: "emulator-5554", state: "device" },
      { serial: "R58M", state: "unauthorized" },
      { serial: "1-1", state: "no permissions (user in plugdev group; see [http://x])" },
    ]);
  });

  test("hostRequest sends a length-prefixed service and returns the OKAY body, or the FAIL text as an error", async () => {
    const seen: string[] = [];
    const s = createServer((sock) =>
      sock.on("data", (d) => {
        const service = d.toString().slice(4);
        seen.push(d.toString());
        sock.end(service === "host:version" ? "OKAY00040029" : "FAIL0007unknown");
      }),
    );
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    const port = (s.address() as { port: number }).port;
    try {
      expect(await hostRequest(port, "host:version")).toBe("0029");
      await expect(hostRequest(port, "host:nope")).rejects.toThrow("host:nope: FAIL unknown");
      expect(seen).toEqual(["000chost:version", "0009host:nope"]);
    } finally {
      s.close();
    }
  });

  test("hostRequest fails when nothing listens", async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((r) => s.close(() => r()));
    await expect(hostRequest(port, "host:version")).rejects.toThrow("ECONNREFUSED");
  });
});
