/** `devicerail daemon start|stop|status`: the background daemon of the data directory. */
import { dataDirOf } from "./client.ts";
import { type Attached, attach, logPath, stopDaemon, versionMismatch } from "./daemon-control.ts";
import { EXIT, out, printJson, withSpinner } from "./output.ts";
import { endpointText } from "../client/endpoint.ts";
import { stdout, stderr } from "./std-streams.ts";

type Env = Record<string, string | undefined>;

export interface DaemonStatus {
  running: boolean;
  dataDir: string;
  pid?: number;
  version?: string;
  startedAtMs?: number;
  uptimeMs?: number;
  /** `tokenFile`: where the token the TCP port requires is kept, when it is the data directory's. */
  listeners?: { socket: string | null; tcp: string | null; tokenFile?: string };
  log?: string;
  devices?: string[];
  openSessions?: { id: string; deviceId: string | null }[];
  /** Set by `start`: whether this command started it. */
  started?: boolean;
}

async function statusOf(a: Attached, dataDir: string): Promise<DaemonStatus> {
  const { record, client: conn } = a;
  const [{ devices }, { sessions }] = await Promise.all([
    conn.call("devices.list"),
    conn.call("devicerail.sessions.list", { state: "active" }),
  ]);
  return {
    running: true,
    dataDir,
    pid: record.pid,
    version: a.hello.server.version,
    startedAtMs: record.startedAtMs,
    uptimeMs: Date.now() - record.startedAtMs,
    listeners: {
      socket: record.socket ?? null,
      tcp: record.port !== undefined ? endpointText({ host: record.host ?? "127.0.0.1", port: record.port }) : null,
      ...(record.tokenFile ? { tokenFile: record.tokenFile } : {}),
    },
    log: logPath(dataDir),
    devices: devices.map((d) => d.id),
    openSessions: sessions.map((s) => ({ id: s.id, deviceId: s.deviceId })),
  };
}

const duration = (ms: number) => {
  const s = Math.floor(ms / 1000);
  return s < 60
    ? `${s} s`
    : s < 3600
      ? `${Math.floor(s / 60)} min ${s % 60} s`
      : `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
};

function print(s: DaemonStatus): void {
  const st = out();
  if (!s.running) {
    stdout.write(`no devicerail daemon runs on ${s.dataDir}\n`);
    return;
  }
  const lines = [
    `${st.green("running")} devicerail ${s.version}, pid ${s.pid}, up ${duration(s.uptimeMs ?? 0)}${s.started ? " (started now)" : ""}`,
    `  data directory  ${s.dataDir}`,
    `  socket          ${s.listeners?.socket ?? "-"}`,
    `  tcp             ${s.listeners?.tcp ?? "-"}${s.listeners?.tokenFile ? ` (requires the token in ${s.listeners.tokenFile})` : ""}`,
    `  log             ${s.log}`,
    `  devices         ${s.devices?.length ? s.devices.join(", ") : "none"}`,
    `  open sessions   ${s.openSessions?.length ? s.openSessions.map((o) => `${o.id} (${o.deviceId ?? "?"})`).join(", ") : "none"}`,
  ];
  stdout.write(`${lines.join("\n")}\n`);
}

export async function daemonCommand(
  action: "start" | "stop" | "status",
  opts: { json?: boolean },
  env: Env = process.env,
): Promise<number> {
  const dataDir = dataDirOf(env);
  if (action === "stop") {
    const r = await withSpinner("stopping the devicerail daemon…", () => stopDaemon(dataDir));
    if (opts.json) printJson({ stopped: r.stopped, dataDir, ...(r.pid ? { pid: r.pid } : {}) });
    else
      stdout.write(
        r.stopped ? `stopped the devicerail daemon (pid ${r.pid})\n` : `no devicerail daemon runs on ${dataDir}\n`,
      );
    return 0;
  }
  let attached: Attached;
  try {
    attached = await withSpinner("starting the devicerail daemon…", () =>
      attach(dataDir, env, { start: action === "start" }),
    );
  } catch (e) {
    if (action === "status") {
      const s: DaemonStatus = { running: false, dataDir };
      if (opts.json) printJson(s);
      else print(s);
      // Like `systemctl status`: not running is its own exit code, so scripts can test for it.
      return EXIT.notRunning;
    }
    throw e;
  }
  try {
    const mismatch = versionMismatch(attached.hello);
    if (mismatch) stderr.write(`devicerail: ${mismatch}\n`);
    const s = { ...(await statusOf(attached, dataDir)), ...(action === "start" ? { started: attached.started } : {}) };
    if (opts.json) printJson(s);
    else print(s);
    return 0;
  } finally {
    void attached.client.close();
  }
}
