/**
 * What doctor asks the adb server and the kernel, without side effects: the adb CLI would start
 * a server when none runs, so the server is asked directly over its smart-socket protocol.
 */
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { connect } from "node:net";

/** One host service request (`host:version`, `host:devices`); resolves with the length-prefixed reply. */
export function hostRequest(port: number, service: string, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let buf = Buffer.alloc(0);
    const fail = (e: Error) => {
      socket.destroy();
      reject(e);
    };
    const timer = setTimeout(() => fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 8) return;
      const len = Number.parseInt(buf.subarray(4, 8).toString(), 16);
      if (buf.length < 8 + len) return;
      clearTimeout(timer);
      socket.destroy();
      const status = buf.subarray(0, 4).toString();
      const body = buf.subarray(8, 8 + len).toString();
      if (status === "OKAY") resolve(body);
      else reject(new Error(`${service}: ${status} ${body}`));
    });
    socket.once("error", (e) => {
      clearTimeout(timer);
      fail(e);
    });
    // After an answer this rejects a settled promise, which is a no-op.
    socket.once("close", () => {
      clearTimeout(timer);
      reject(new Error(`${service}: the server closed the connection without answering`));
    });
    socket.once("connect", () => socket.write(`${service.length.toString(16).padStart(4, "0")}${service}`));
  });
}

export interface AdbDeviceEntry {
  serial: string;
  state: string;
}

/** `serial\tstate` lines; the state may have a reason appended (`no permissions (…)`). */
export function parseDevices(body: string): AdbDeviceEntry[] {
  return body
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const tab = l.indexOf("\t");
      return tab < 0
        ? { serial: l.trim(), state: "unknown" }
        : { serial: l.slice(0, tab), state: l.slice(tab + 1).trim() };
    });
}

/** IPv4 word as /proc writes it: the address bytes in host (little-endian) order. */
function ipv4(hex: string): string {
  const n = Number.parseInt(hex, 16);
  return [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, n >>> 24].join(".");
}

/** IPv6 as four such words; printed compressed enough to read (`::`, `::1`, `::ffff:127.0.0.1`). */
function ipv6(hex: string): string {
  const bytes: number[] = [];
  for (let w = 0; w < 4; w++) {
    const word = hex.slice(w * 8, w * 8 + 8);
    for (let b = 3; b >= 0; b--) bytes.push(Number.parseInt(word.slice(b * 2, b * 2 + 2), 16));
  }
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255)
    return `::ffff:${bytes.slice(12).join(".")}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  const text = groups.join(":");
  return text === "0:0:0:0:0:0:0:0" ? "::" : text === "0:0:0:0:0:0:0:1" ? "::1" : text;
}

/** Local addresses listening on `port` in a /proc/net/tcp or tcp6 table (state 0A = LISTEN). */
export function parseProcNetTcp(table: string, port: number, v6: boolean): string[] {
  const found: string[] = [];
  for (const line of table.split("\n").slice(1)) {
    const cols = line.trim().split(/\s+/);
    const [addr, portHex] = (cols[1] ?? "").split(":");
    if (cols[3] !== "0A" || !addr || !portHex || Number.parseInt(portHex, 16) !== port) continue;
    found.push(v6 ? ipv6(addr) : ipv4(addr));
  }
  return found;
}

/** Local addresses listening on `port` in `ss -ltn` output (`LISTEN 0 4096 127.0.0.1:5037 0.0.0.0:*`). */
export function parseSsListen(text: string, port: number): string[] {
  const found: string[] = [];
  for (const line of text.split("\n")) {
    const local = line.trim().split(/\s+/)[3];
    if (!local?.endsWith(`:${port}`)) continue;
    const host = local.slice(0, local.lastIndexOf(":")).replace(/^\[(.*)\]$/, "$1");
    found.push(host === "*" ? "0.0.0.0" : host.replace(/%.*$/, ""));
  }
  return found;
}

/** Where something listens on `port`: from /proc on Linux, else `ss`; null when neither can tell. */
export function listeningAddresses(port: number): string[] | null {
  try {
    const v4 = parseProcNetTcp(readFileSync("/proc/net/tcp", "utf8"), port, false);
    let v6: string[] = [];
    try {
      v6 = parseProcNetTcp(readFileSync("/proc/net/tcp6", "utf8"), port, true);
    } catch {}
    return [...v4, ...v6];
  } catch {}
  try {
    const r = Bun.spawnSync(["ss", "-ltn"], { stdout: "pipe", stderr: "ignore", timeout: 2_000 });
    if (r.exitCode === 0) return parseSsListen(r.stdout.toString(), port);
  } catch {}
  return null;
}

/**
 * The executable of the adb server process serving `port` (from /proc: the server runs as
 * `adb -L tcp:<port> fork-server server …`, or with `-P <port>`); null where /proc is missing or
 * no such process is visible.
 */
export function serverExecutable(port: number): string | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  } catch {
    return null;
  }
  for (const pid of pids) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0");
      if (!argv.includes("fork-server")) continue;
      const at = (flag: string) => argv[argv.indexOf(flag) + 1] ?? "";
      const serves =
        (argv.includes("-L") && new RegExp(`^tcp:(?:[^:]*:)?${port}$`).test(at("-L"))) ||
        (argv.includes("-P") && at("-P") === String(port));
      if (serves) return readlinkSync(`/proc/${pid}/exe`);
    } catch {}
  }
  return null;
}
