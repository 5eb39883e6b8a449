/**
 * The main job of the README: starts the daemon on stdio and runs a short scripted client session,
 * printing each request and what the daemon answered. DEVICERAIL_TEST_BIN runs a compiled binary.
 */
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const cmd = process.env.DEVICERAIL_TEST_BIN ? [process.env.DEVICERAIL_TEST_BIN, "serve"] : [process.execPath, join(ROOT, "src/daemon/main.ts"), "serve"];
const color = process.stdout.isTTY;
const dim = (s: string) => (color ? `\x1b[2m${s}\x1b[0m` : s);
const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[0m` : s);

const daemon = Bun.spawn(cmd, { cwd: ROOT, stdin: "pipe", stdout: "pipe", stderr: "inherit", env: { ...process.env, DEVICERAIL_LOG_LEVEL: process.env.DEVICERAIL_LOG_LEVEL ?? "warn" } });
const reader = daemon.stdout.getReader();
const decoder = new TextDecoder();
let buffer = "";
async function nextLine(): Promise<string> {
  for (;;) {
    const nl = buffer.indexOf("\n");
    if (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      return line;
    }
    const { done, value } = await reader.read();
    if (done) throw new Error("daemon closed stdout");
    buffer += decoder.decode(value, { stream: true });
  }
}

let id = 0;
async function send(line: string, label: string): Promise<any> {
  process.stdout.write(`${bold("→")} ${label}\n  ${dim(line.length > 160 ? `${line.slice(0, 157)}...` : line)}\n`);
  daemon.stdin.write(`${line}\n`);
  daemon.stdin.flush();
  const answer = await nextLine();
  const parsed = JSON.parse(answer);
  const summary = parsed.error ? `error ${parsed.error.code} ${parsed.error.data.code}: ${parsed.error.message}` : "ok";
  process.stdout.write(`${bold("←")} ${summary}\n  ${dim(answer.length > 300 ? `${answer.slice(0, 297)}...` : answer)}\n\n`);
  return parsed;
}
const call = (method: string, params?: unknown, label = method) =>
  send(JSON.stringify({ jsonrpc: "2.0", id: ++id, method, ...(params === undefined ? {} : { params }) }), label);

process.stdout.write(`${bold("devicerail demo")} — ${cmd.join(" ")}\n\n`);
const hello = await call(
  "system.hello",
  {
    client: { name: "devicerail-demo", version: "1" },
    protocol: { ranges: [{ major: 1, minMinor: 0, maxMinor: 5 }] },
    features: { optional: ["events.snapshot.v1", "request.control.v1", "device.routing.v1", "action.protected.v1", "observation.uiSnapshot.v1", "device.semanticActions.v1", "verdict.record.v1", "media.stream.v1", "session.export.page.v1"] },
  },
  "system.hello (negotiate protocol 1.0–1.5 and features)",
);
const describe = await call("system.describe");
const devices = await call("devices.list", {}, "devices.list (which phones are attached)");
const start = await call("session.start", undefined, "session.start (needs a device)");
await send("{not json", "a malformed line (the daemon answers and keeps serving)");
await call("sessions.list");
daemon.stdin.end();
const code = await daemon.exited;

const selected = hello.result?.protocol?.selected;
process.stdout.write(
  [
    bold("What happened"),
    `  negotiated protocol ${selected?.major}.${selected?.minor} with ${hello.result?.features?.enabled?.length ?? 0} features`,
    `  connection ${describe.result?.connection?.connectionId}`,
    `  ${devices.result?.devices?.length ?? 0} device(s) registered${devices.result?.devices?.length ? "" : " — device drivers (mock, Android, iOS Simulator) are not part of this build yet"}`,
    `  session.start answered ${start.error ? start.error.data.code : "ok"}`,
    `  daemon exited with code ${code} after end of input`,
    "",
  ].join("\n"),
);
process.exit(code === 0 && hello.result ? 0 : 1);
