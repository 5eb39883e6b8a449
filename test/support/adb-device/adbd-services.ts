/**
 * The device services behind OPEN: shell (v2 and legacy), exec, sync and `tcp:<port>` (a connection
 * to a port the device listens on, what `adb forward` opens). Anything else is refused
 * with CLSE(0, id) by the caller, which the adb CLI reports as `error: closed`.
 */
import type { AdbdStream } from "./adbd-stream.ts";
import { syncService, type SyncFs } from "./adbd-sync.ts";
import { bytes, type CommandIo, StdinBuffer } from "./command-io.ts";
import { encodeShellExit, encodeShellPacket, ShellId, ShellPacketReader } from "./wire.ts";

/** How a command line reached the device: each service has its own output rules. */
export type ServiceKind = "shell,v2" | "shell" | "exec";

export interface ServiceRequest {
  kind: ServiceKind;
  /** The command line exactly as it arrived in the OPEN payload. */
  command: string;
  /** `shell,v2,…,pty:` or the legacy interactive shell: output goes through a terminal. */
  pty: boolean;
}

/** What the transport needs from the device model. */
export interface AdbdDevice {
  /** ro.product.name/model/device for the CNXN banner. */
  bannerProps(): Record<string, string>;
  runCommand(request: ServiceRequest, io: CommandIo, stdin: StdinBuffer): Promise<number>;
  readonly fs: SyncFs;
  /** Whether closing a legacy `shell:` stream ends its command (not on real phones; FakePhoneOptions.legacyShellHangup). */
  readonly legacyShellHangup?: boolean;
  /** Who accepts a connection to device port `port`; null when nothing listens there. */
  tcpListener?(port: number): TcpListener | null;
}

/** One accepted connection: bytes from the host go to `write`, the host's close to `close`. */
export interface TcpConnection {
  write(data: Uint8Array): void;
  close(): void;
}

/** Accepts a connection; `peer` carries the device side's bytes and its close back to the host. */
export type TcpListener = (peer: { send(data: Uint8Array): void; end(): void }) => TcpConnection;

/**
 * The starter for `service`, or null when the device does not offer it. The caller sends OKAY
 * before starting, since the host must see OKAY before the service's first WRTE.
 */
export function routeService(
  service: string,
  stream: AdbdStream,
  device: AdbdDevice,
  unplug: () => void,
): (() => void) | null {
  if (service.startsWith("shell,") || service.startsWith("shell:")) {
    const colon = service.indexOf(":");
    const options = service.slice(0, colon).split(",").slice(1);
    const command = service.slice(colon + 1);
    if (options.includes("v2"))
      return () => void shellV2(stream, device, { kind: "shell,v2", command, pty: options.includes("pty") }, unplug);
    // Modern adbd uses a pty for legacy `shell:` only when the command is empty (interactive).
    return () => void rawShell(stream, device, { kind: "shell", command, pty: command === "" }, unplug);
  }
  if (service.startsWith("exec:"))
    return () => void rawShell(stream, device, { kind: "exec", command: service.slice(5), pty: false }, unplug);
  if (service === "sync:") return () => syncService(stream, device.fs);
  // adbd's service_to_fd connects a socket spec (`tcp:<port>`) with socket_spec_connect before the
  // OPEN is answered; a refused connect leaves no fd, so the open fails and the host sees the
  // stream closed (AOSP packages/modules/adb services.cpp). Only the `tcp:<port>` form is simulated.
  const tcp = /^tcp:(\d{1,5})$/.exec(service);
  if (tcp) {
    const listener = device.tcpListener?.(Number(tcp[1])) ?? null;
    return listener && (() => tcpService(stream, listener));
  }
  return null;
}

/** A forwarded connection: raw bytes both ways; either side's close closes the other. */
function tcpService(stream: AdbdStream, listener: TcpListener): void {
  const conn = listener({ send: (data) => void stream.write(data), end: () => void stream.end() });
  stream.onData = (data) => conn.write(data);
  stream.onClose = () => conn.close();
}

/** A terminal's onlcr: every `\n` leaves as `\r\n`, binary output included. */
function onlcr(data: Uint8Array): Uint8Array {
  let n = 0;
  for (const b of data) if (b === 10) n++;
  if (n === 0) return data;
  const out = new Uint8Array(data.length + n);
  let j = 0;
  for (const b of data) {
    if (b === 10) out[j++] = 13;
    out[j++] = b;
  }
  return out;
}

async function shellV2(stream: AdbdStream, device: AdbdDevice, req: ServiceRequest, unplug: () => void): Promise<void> {
  const stdin = new StdinBuffer();
  const reader = new ShellPacketReader();
  stream.onData = (data) => {
    for (const p of reader.push(data)) {
      if (p.id === ShellId.stdin) stdin.push(p.data);
      else if (p.id === ShellId.closeStdin) stdin.end();
    }
  };
  stream.onClose = () => stdin.end();
  const packet = (id: number) => (data: string | Uint8Array) => {
    const b = bytes(data);
    if (b.length) void stream.write(encodeShellPacket(id, req.pty ? onlcr(b) : b));
  };
  // A pty has one output channel, so stderr joins stdout there.
  const io: CommandIo = {
    stdin,
    out: packet(ShellId.stdout),
    err: packet(req.pty ? ShellId.stdout : ShellId.stderr),
    signal: stream.signal,
    unplug,
  };
  const status = await device.runCommand(req, io, stdin);
  if (stream.closed) return;
  await stream.write(encodeShellExit(status));
  await stream.end();
}

/**
 * Legacy `shell:` and `exec:`: raw bytes, stderr merged into stdout, no exit status. A legacy
 * non-pty `shell:` command is not ended when the host closes the stream, as on real phones (AOSP
 * adb/daemon/shell_service.cpp: without the shell protocol there is no SIGHUP); only writing to
 * the closed stream kills it (SIGPIPE). `exec:` keeps ending its command on close here.
 */
async function rawShell(
  stream: AdbdStream,
  device: AdbdDevice,
  req: ServiceRequest,
  unplug: () => void,
): Promise<void> {
  const stdin = new StdinBuffer();
  stream.onData = (data) => stdin.push(data);
  stream.onClose = () => stdin.end();
  const survives = req.kind === "shell" && !req.pty && device.legacyShellHangup !== true;
  const pipe = new AbortController();
  const write = (data: string | Uint8Array) => {
    const b = bytes(data);
    if (!b.length) return;
    if (survives && stream.closed) pipe.abort("SIGPIPE");
    else void stream.write(req.pty ? onlcr(b) : b);
  };
  const io: CommandIo = { stdin, out: write, err: write, signal: survives ? pipe.signal : stream.signal, unplug };
  await device.runCommand(req, io, stdin);
  await stream.end();
}
