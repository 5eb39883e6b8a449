import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcSocket, ServeDaemon, within } from "./serve-daemon.ts";

const roots: string[] = [];
afterAll(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** A fresh private folder; the socket goes into a subfolder the daemon creates. */
function place(): { root: string; dir: string; path: string } {
  const root = mkdtempSync(join(tmpdir(), "devicerail-sock-"));
  roots.push(root);
  const dir = join(root, "run");
  return { root, dir, path: join(dir, "rpc.sock") };
}

const mode = (path: string) => statSync(path).mode & 0o777;

/** `setpriv` (util-linux) or `runuser`, to connect as another uid; null when neither is usable here. */
function otherUidCommand(script: string): string[] | null {
  if (process.getuid?.() !== 0) return null;
  if (Bun.which("setpriv"))
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", script];
  if (Bun.which("runuser")) return ["runuser", "-u", "nobody", "--", process.execPath, "-e", script];
  return null;
}

describe("the Unix socket listener", () => {
  test("the socket is 0600 in a created 0700 directory and speaks NDJSON and HTTP when the daemon serves --socket", async () => {
    const { dir, path } = place();
    await using d = await ServeDaemon.start(["--socket", path]);
    expect(d.listening).toEqual({ socket: path });
    expect([mode(dir), mode(path), statSync(path).isSocket()]).toEqual([0o700, 0o600, true]);
    const c = await RpcSocket.connect({ unix: path });
    expect((await c.hello()).result.transport).toEqual({ kind: "unix", framing: "ndjson" });
    const res = await fetch("http://localhost/devices", { unix: path } as RequestInit);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { devices: { id: string }[] }).devices.map((x) => x.id)).toEqual(["mock-1"]);
    c.close();
    expect(await d.stop()).toBe(0);
    expect(existsSync(path)).toBe(false);
  });

  test("one daemon serves TCP and the Unix socket together when --listen and --socket are both given", async () => {
    const { path } = place();
    await using d = await ServeDaemon.start(["--listen", "127.0.0.1:0", "--socket", path]);
    expect(d.listening).toEqual({ host: "127.0.0.1", port: expect.any(Number), socket: path });
    const [tcp, unix] = await Promise.all([RpcSocket.connect({ port: d.port }), RpcSocket.connect({ unix: path })]);
    expect([(await tcp.hello()).result.transport.kind, (await unix.hello()).result.transport.kind]).toEqual([
      "tcp",
      "unix",
    ]);
    await tcp.call("device.connect");
    await tcp.call("session.start");
    // One device pool behind both listeners.
    expect((await unix.call("session.start")).error?.data.code).toBe("device_in_use");
  });

  test("a stale socket left by a killed daemon is replaced when a new daemon starts on the path", async () => {
    const { path } = place();
    const first = await ServeDaemon.start(["--socket", path]);
    first.proc.kill("SIGKILL");
    await first.exited;
    expect(statSync(path).isSocket()).toBe(true);
    await using second = await ServeDaemon.start(["--socket", path]);
    const c = await RpcSocket.connect({ unix: path });
    expect((await c.hello()).result.transport.kind).toBe("unix");
    c.close();
    await first[Symbol.asyncDispose]();
    expect(second.listening).toEqual({ socket: path });
  });

  test("start-up fails with exit 1 and the first daemon keeps serving when a live daemon is on the path", async () => {
    const { path } = place();
    await using live = await ServeDaemon.start(["--socket", path]);
    await using refused = new ServeDaemon(["--socket", path]);
    expect(await refused.exited).toBe(1);
    expect(refused.stderr).toContain(`another process (a running devicerail daemon?) is listening on ${path}`);
    const c = await RpcSocket.connect({ unix: path });
    expect((await c.hello()).result.transport.kind).toBe("unix");
    c.close();
    expect(live.proc.exitCode).toBeNull();
  });

  test("start-up fails with exit 1 when the socket's directory is a symbolic link", async () => {
    const { root } = place();
    mkdirSync(join(root, "real"), { mode: 0o700 });
    symlinkSync(join(root, "real"), join(root, "link"));
    await using d = new ServeDaemon(["--socket", join(root, "link", "rpc.sock")]);
    expect(await d.exited).toBe(1);
    expect(d.stderr).toContain(`the socket directory ${join(root, "link")} is a symbolic link`);
    expect(existsSync(join(root, "real", "rpc.sock"))).toBe(false);
  });

  test("start-up fails with exit 1 when the socket's directory is writable by others", async () => {
    const { dir, path } = place();
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    await using d = new ServeDaemon(["--socket", path]);
    expect(await d.exited).toBe(1);
    expect(d.stderr).toContain(`the socket directory ${dir} is writable by other users (mode 777)`);
  });

  test("start-up fails with exit 1 and the file is kept when the path is a regular file", async () => {
    const { dir, path } = place();
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(path, "not a socket");
    await using d = new ServeDaemon([], { DEVICERAIL_RPC_SOCKET: path });
    expect(await d.exited).toBe(1);
    expect(d.stderr).toContain(`${path} exists and is not a socket`);
    expect(statSync(path).isFile()).toBe(true);
  });

  // The file modes at work: connect(2) needs write permission (the peer uid check behind them is local-access.test.ts's).
  const script = (path: string) =>
    `try { await Bun.connect({ unix: ${JSON.stringify(path)}, socket: { data() {} } }); console.log("connected"); } catch (e) { console.log(e.code); }`;
  const probe = otherUidCommand("");
  test.skipIf(probe === null && process.env.CI !== "true")(
    "a connection from another uid is refused with EACCES",
    async () => {
      if (probe === null) throw new Error("CI needs root and setpriv or runuser to check that another uid is refused");
      const { root, dir, path } = place();
      await using d = await ServeDaemon.start(["--socket", path], { DEVICERAIL_LOG_LEVEL: "debug" });
      const attempt = async () => {
        const child = Bun.spawn(otherUidCommand(script(path)) as string[], {
          stdout: "pipe",
          stderr: "pipe",
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp" },
        });
        const [out, err] = await within(
          Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]),
          15_000,
          "the other-uid probe did not finish",
        );
        return { out: out.trim(), err, code: await child.exited };
      };
      expect(await attempt()).toEqual({ out: "EACCES", err: "", code: 0 });
      // With the directories opened for traversal, the socket's own 0600 still refuses.
      chmodSync(root, 0o711);
      chmodSync(dir, 0o711);
      expect(await attempt()).toEqual({ out: "EACCES", err: "", code: 0 });
      // Nothing was accepted, so nothing reached dispatch.
      expect(d.stderr).not.toContain("Unix socket connection opened");
      const c = await RpcSocket.connect({ unix: path });
      await c.hello();
      c.close();
      await d.stop();
      expect(d.stderr).toContain("Unix socket connection opened");
    },
  );
});
