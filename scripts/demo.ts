/**
 * The main job of the README: starts the daemon on stdio and runs a short scripted client session,
 * printing each request and what the daemon answered. DEVICERAIL_TEST_BIN runs a compiled binary.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const cli = process.env.DEVICERAIL_TEST_BIN
  ? [process.env.DEVICERAIL_TEST_BIN]
  : [process.execPath, join(ROOT, "src/main.ts")];
const cmd = [...cli, "serve"];
const color = process.stdout.isTTY;
const dim = (s: string) => (color ? `\x1b[2m${s}\x1b[0m` : s);
const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[0m` : s);

// A private data directory unless one is given: the demo must not collide with a daemon the user
// already runs (one daemon per data directory) nor leave demo Sessions in their store.
const dataDir = process.env.DEVICERAIL_DATA_DIR ?? mkdtempSync(join(tmpdir(), "devicerail-demo-"));
const daemon = Bun.spawn(cmd, {
  cwd: ROOT,
  stdin: "pipe",
  stdout: "pipe",
  stderr: "inherit",
  env: {
    ...process.env,
    DEVICERAIL_DATA_DIR: dataDir,
    DEVICERAIL_LOG_LEVEL: process.env.DEVICERAIL_LOG_LEVEL ?? "warn",
  },
});
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
  process.stdout.write(
    `${bold("←")} ${summary}\n  ${dim(answer.length > 300 ? `${answer.slice(0, 297)}...` : answer)}\n\n`,
  );
  return parsed;
}
const call = (method: string, params?: unknown, label = method) =>
  send(JSON.stringify({ jsonrpc: "2.0", id: ++id, method, ...(params === undefined ? {} : { params }) }), label);

process.stdout.write(`${bold("devicerail demo")} — ${cmd.join(" ")} (data in ${dataDir})\n\n`);
const hello = await call(
  "system.hello",
  {
    client: { name: "devicerail-demo", version: "1" },
    protocol: { ranges: [{ major: 1, minMinor: 0, maxMinor: 5 }] },
    features: {
      optional: [
        "events.snapshot.v1",
        "request.control.v1",
        "device.routing.v1",
        "action.protected.v1",
        "observation.uiSnapshot.v1",
        "device.semanticActions.v1",
        "verdict.record.v1",
        "session.export.page.v1",
      ],
    },
  },
  "system.hello (negotiate protocol 1.0–1.5 and features)",
);
const devices = await call("devices.list", {}, "devices.list (which phones are attached)");
const connected = await call("device.connect");
const start = await call("session.start", undefined, "session.start (lease the device, open an append-only log)");
const observation = await call(
  "device.observe",
  undefined,
  "device.observe (screenshot and UI tree stored as content-addressed evidence)",
);
const tree = await call(
  "ui.snapshot.get",
  { observationId: observation.result?.id },
  "ui.snapshot.get (the normalized UI tree of that observation)",
);
const selector = (m: object) => ({
  context: null,
  role: null,
  name: null,
  value: null,
  identifier: null,
  text: null,
  css: null,
  ...m,
});
const act = (name: string, args: unknown, label: string) =>
  call("device.execute", { id: crypto.randomUUID(), name, arguments: args }, `device.execute ${name} (${label})`);
await act(
  "tapElement",
  { target: { kind: "selector", selector: selector({ identifier: "username" }) } },
  "focus the user-name field by its id",
);
await act("inputText", { text: "alice" }, "type into it");
await act(
  "setElementValue",
  { target: { kind: "selector", selector: selector({ role: "SecureTextField" }) }, value: "correct horse" },
  "protected: the value is never recorded",
);
const signIn = await act(
  "tapElement",
  {
    target: {
      kind: "selector",
      selector: selector({ role: "Button", text: { value: "sign in", mode: "exact", caseSensitive: false } }),
    },
  },
  "by role and text",
);
await act(
  "tapElement",
  { target: { kind: "selector", selector: selector({ identifier: "sync" }) } },
  "start a slow sync",
);
const synced = await act(
  "waitForElement",
  { selector: selector({ text: { value: "^Synced \\d+ items$", mode: "regex" } }), condition: "visible" },
  "poll until the sync is done",
);
await send("{not json", "a malformed line (the daemon answers and keeps serving)");
const screenshot = synced.result?.after?.screenshot ?? observation.result?.screenshot;
const verdict = await call("verdict.record", {
  verdict: {
    status: synced.result?.output?.matched ? "pass" : "fail",
    summary: "signed in and synced",
    evidence: screenshot ? [screenshot] : [],
  },
});
const end = await call("session.end", { outcome: "completed" });
const exported = await call("session.export", { sessionId: start.result?.id });
daemon.stdin.end();
const code = await daemon.exited;

// The Session as a folder a person can open, with the screenshots as PNG files named by digest
// (`devicerail export`; it only reads the store, so no device drivers are started for it).
const exportDir = join(dataDir, "export");
const exportRun =
  code === 0 && start.result?.id
    ? Bun.spawnSync([...cli, "export", start.result.id, "-o", exportDir], {
        cwd: ROOT,
        stdout: "pipe",
        stderr: "pipe",
        env: {
          ...process.env,
          DEVICERAIL_DATA_DIR: dataDir,
          DEVICERAIL_ANDROID: "off",
          DEVICERAIL_IOS: "off",
          DEVICERAIL_LOG_LEVEL: "warn",
        },
      })
    : null;
// Like every CLI command, export started the data directory's daemon in the background (as adb
// does); the demo leaves nothing running behind it.
if (exportRun)
  Bun.spawnSync([...cli, "daemon", "stop"], {
    cwd: ROOT,
    stdout: "ignore",
    stderr: "ignore",
    env: { ...process.env, DEVICERAIL_DATA_DIR: dataDir, DEVICERAIL_LOG_LEVEL: "warn" },
  });
const shotFile = screenshot ? join(exportDir, "evidence", `${screenshot.sha256}.png`) : null;
const exportedShot = exportRun?.exitCode === 0 && shotFile !== null && existsSync(shotFile);

const selected = hello.result?.protocol?.selected;
const kinds = (exported.result?.events ?? []).map((e: { payload: { type: string } }) => e.payload.type).join(", ");
process.stdout.write(
  [
    bold("What happened"),
    `  negotiated protocol ${selected?.major}.${selected?.minor} with ${hello.result?.features?.enabled?.length ?? 0} features`,
    `  ${devices.result?.devices?.length ?? 0} device(s) registered: ${(devices.result?.devices ?? []).map((d: { id: string }) => d.id).join(", ")}; connected ${connected.result?.id}`,
    `  session ${start.result?.id}: observed ${tree.result?.nodes?.length ?? 0} UI nodes, signed in (now on ${signIn.result?.after?.metadata?.screen ?? "?"}), sync ${synced.result?.output?.matched ? "seen done" : "not seen"}, verdict ${verdict.result ? "recorded" : verdict.error?.data.code}`,
    `  last screenshot: ${exportedShot ? `${shotFile} (a PNG, from \`devicerail export\` into ${exportDir})` : `not exported: ${exportRun ? new TextDecoder().decode(exportRun.stderr).trim() || `exit ${exportRun.exitCode}` : "no Session"}`}`,
    `  session.end answered ${end.result ? `state ${end.result.state}, ${end.result.eventCount} events` : end.error?.data.code}: ${kinds}`,
    `  daemon exited with code ${code} after end of input`,
    "",
  ].join("\n"),
);
process.exit(code === 0 && hello.result && end.result && synced.result?.output?.matched && exportedShot ? 0 : 1);
