import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AdbServer, startAdbServer } from "./adb-server.ts";
import { DEMO_PACKAGE, demoScenario } from "./demo-scenario.ts";
import type { TraceEntry } from "./fake-adbd.ts";
import { startFakeDevice } from "./fake-device.ts";
import { describeWithAdb } from "./with-adb.ts";

let server: AdbServer;
const local = mkdtempSync(join(tmpdir(), "devicerail-adb-cli-"));
beforeAll(async () => {
  server = await startAdbServer();
});
afterAll(async () => {
  await server?.stop();
  rmSync(local, { recursive: true, force: true });
});

/** Width and height from a PNG's IHDR chunk. */
function pngSize(png: Uint8Array): { width: number; height: number } {
  expect(Buffer.from(png.subarray(0, 16)).toString("hex")).toBe("89504e470d0a1a0a0000000d49484452");
  const v = new DataView(png.buffer, png.byteOffset);
  return { width: v.getUint32(16), height: v.getUint32(20) };
}

describeWithAdb("adb CLI against the simulated device", () => {
  test("adb devices -l lists the device with the banner's product, model and device", async () => {
    await using dev = await startFakeDevice(server, {
      props: { "ro.product.model": "Pixel_Test", "ro.product.name": "test_product", "ro.product.device": "testdev" },
    });
    const r = await server.adb(["devices", "-l"]);
    const line = r.stdout.split("\n").find((l) => l.startsWith(dev.serial)) ?? "";
    expect(line.replace(/transport_id:\d+$/, "transport_id:N").split(/\s+/)).toEqual([
      dev.serial,
      "device",
      "product:test_product",
      "model:Pixel_Test",
      "device:testdev",
      "transport_id:N",
    ]);
  });

  test("adb shell returns stdout, stderr and the exit status when shell_v2 is advertised", async () => {
    await using dev = await startFakeDevice(server);
    const s = ["-s", dev.serial, "shell"];
    const results = await Promise.all([
      server.adb([...s, "echo", "hi"]),
      server.adb([...s, "false"]),
      server.adb([...s, "cat", "/nope"]),
    ]);
    expect(results.map(({ exitCode, stdout, stderr }) => ({ exitCode, stdout, stderr }))).toEqual([
      { exitCode: 0, stdout: "hi\n", stderr: "" },
      { exitCode: 1, stdout: "", stderr: "" },
      { exitCode: 1, stdout: "", stderr: "cat: /nope: No such file or directory\n" },
    ]);
  });

  test("adb shell merges stderr and loses the exit status when shell_v2 is not advertised", async () => {
    await using dev = await startFakeDevice(server, { features: ["cmd"] });
    const s = ["-s", dev.serial, "shell"];
    const results = await Promise.all([
      server.adb([...s, "echo", "hi"]),
      server.adb([...s, "false"]),
      server.adb([...s, "cat", "/nope"]),
    ]);
    expect(results.map(({ exitCode, stdout, stderr }) => ({ exitCode, stdout, stderr }))).toEqual([
      { exitCode: 0, stdout: "hi\n", stderr: "" },
      { exitCode: 0, stdout: "", stderr: "" },
      { exitCode: 0, stdout: "cat: /nope: No such file or directory\n", stderr: "" },
    ]);
    expect(dev.phone.serviceLog.map((s) => s.kind)).toEqual(["shell", "shell", "shell"]);
  });

  test("adb exec-out screencap -p returns a PNG of the screen size, wm size override included", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario, screen: { width: 720, height: 1280 } });
    const first = await server.adb(["-s", dev.serial, "exec-out", "screencap", "-p"]);
    expect([first.exitCode, pngSize(first.bytes)]).toEqual([0, { width: 720, height: 1280 }]);
    expect(first.bytes).toEqual(dev.phone.screenshot());
    await server.adb(["-s", dev.serial, "shell", "wm", "size", "600x1000"]);
    expect(pngSize((await server.adb(["-s", dev.serial, "exec-out", "screencap", "-p"])).bytes)).toEqual({
      width: 600,
      height: 1000,
    });
  });

  test("uiautomator dump /dev/tty prints the XML followed directly by the dumped-to line", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario });
    const r = await server.adb(["-s", dev.serial, "exec-out", "uiautomator", "dump", "/dev/tty"]);
    expect(r.stdout).toBe(`${dev.phone.dumpXml()}UI hierchary dumped to: /dev/tty\n`);
  });

  test("uiautomator dump to the default file can be read back with cat and adb pull", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario });
    expect((await server.adb(["-s", dev.serial, "shell", "uiautomator", "dump"])).stdout).toBe(
      "UI hierchary dumped to: /sdcard/window_dump.xml\n",
    );
    expect((await server.adb(["-s", dev.serial, "shell", "cat", "/sdcard/window_dump.xml"])).stdout).toBe(
      dev.phone.dumpXml(),
    );
    const pulled = await server.adb(["-s", dev.serial, "pull", "/sdcard/window_dump.xml", join(local, "dump.xml")]);
    expect([pulled.exitCode, readFileSync(join(local, "dump.xml"), "utf8")]).toEqual([0, dev.phone.dumpXml()]);
  });

  test("adb push stores a file on the phone and adb ls lists it", async () => {
    await using dev = await startFakeDevice(server);
    writeFileSync(join(local, "data.bin"), "payload\n");
    expect(
      (await server.adb(["-s", dev.serial, "push", join(local, "data.bin"), "/data/local/tmp/data.bin"])).exitCode,
    ).toBe(0);
    expect(dev.phone.files.text("/data/local/tmp/data.bin")).toBe("payload\n");
    // The mtime is the local file's, sent by adb push.
    const listing = (await server.adb(["-s", dev.serial, "ls", "/data/local/tmp"])).stdout;
    expect(listing.replace(/ [0-9a-f]{8} data/, " MTIME data")).toBe("000081a4 00000008 MTIME data.bin\n");
  });

  test("input tap and input text sign in, and the next dump shows the home screen", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario });
    const shell = (...a: string[]) => server.adb(["-s", dev.serial, "shell", ...a]);
    await shell("input", "tap", "540", "440");
    await shell("input", "text", "alice");
    await shell("input tap 540 600 && input text 'p@ss word'");
    await shell("input", "tap", "540", "935");
    expect(dev.phone.inputLog).toEqual([
      { kind: "tap", x: 540, y: 440, target: "com.example.app:id/username" },
      { kind: "text", text: "alice", target: "username" },
      { kind: "tap", x: 540, y: 600, target: "com.example.app:id/password" },
      { kind: "text", text: "p@ss word", target: "password" },
      { kind: "tap", x: 540, y: 935, target: "com.example.app:id/sign_in" },
    ]);
    const xml = (await server.adb(["-s", dev.serial, "exec-out", "uiautomator", "dump", "/dev/tty"])).stdout;
    expect(xml.match(/text="[^"]+"/g)).toEqual([
      'text="Welcome, alice!"',
      'text="Taps: 0"',
      ...["Apples", "Bread", "Cheese", "Dates", "Eggs"].map((t) => `text="${t}"`),
    ]);
    expect(dev.phone.appLog).toEqual([{ tag: "LoginActivity", message: "signed in as alice" }]);
  });

  test("input text gets %s as a space, shell-quoted text whole, and unquoted words as too many arguments", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario });
    const shell = (...a: string[]) => server.adb(["-s", dev.serial, "shell", ...a]);
    await shell("input", "tap", "540", "440");
    await shell("input", "text", "a%sb");
    await shell(`input text " it's"`);
    await shell("input text '&c\\d'");
    const split = await shell("input", "text", "two words");
    expect([dev.phone.runtime().state.username, split.exitCode, split.stderr.split("\n")[0]]).toEqual([
      "a b it's&c\\d",
      0,
      "Error: Invalid arguments for command: text",
    ]);
  });

  test("a script on stdin runs and its secret is in stdin, never in a command line", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario });
    await server.adb(["-s", dev.serial, "shell", "input", "tap", "540", "600"]);
    const secret = "hunter2-s3cr3t";
    const r = await server.adb(["-s", dev.serial, "shell", "sh"], { stdin: `input text ${secret}\necho done\n` });
    expect([r.exitCode, r.stdout, dev.phone.runtime().state.password]).toEqual([0, "done\n", secret]);
    expect(dev.phone.serviceLog.at(-1)).toEqual({
      kind: "shell,v2",
      command: "sh",
      stdin: `input text ${secret}\necho done\n`,
      exitCode: 0,
    });
    expect(dev.phone.serviceLog.filter((s) => s.command.includes(secret))).toEqual([]);
    expect(dev.phone.commandLog.filter((c) => c.origin !== "stdin" && c.argv.join(" ").includes(secret))).toEqual([]);
  });

  test("a fixed remote script reads the secret from stdin with read", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario });
    await server.adb(["-s", dev.serial, "shell", "input", "tap", "540", "600"]);
    const r = await server.adb(["-s", dev.serial, "shell", `IFS= read -r s && input text "$s"`], { stdin: "p w%sd\n" });
    expect([r.exitCode, dev.phone.runtime().state.password, dev.phone.serviceLog.at(-1)?.stdin]).toEqual([
      0,
      "p w d",
      "p w%sd\n",
    ]);
  });

  test("the trace shows the service strings clients open, quoting and all", async () => {
    const trace: TraceEntry[] = [];
    await using dev = await startFakeDevice(server, { trace: (e) => trace.push(e) });
    await server.adb(["-s", dev.serial, "shell", "echo", "a b"]);
    await server.adb(["-s", dev.serial, "exec-out", "echo", "a b"]);
    await server.adb(["-s", dev.serial, "shell", "-x", "echo", "hi"]);
    await server.adb(["-s", dev.serial, "reboot"]).then((r) => expect(r.stderr).toBe("error: closed\n"));
    const opens = trace
      .filter((e) => e.direction === "in" && e.command === "OPEN")
      .map((e) => new TextDecoder().decode(e.data));
    // TERM=… appears only when the CLI's own environment has TERM; the server env has none.
    expect(opens).toEqual(["shell,v2,raw:echo a b\0", "exec:echo 'a b'\0", "shell:echo hi\0", "reboot:\0"]);
  });

  test("large output and stdin arrive whole with one WRTE in flight when maxData is small", async () => {
    const big = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7 + (i >> 8)) & 0xff);
    const inFlight = new Map<number, number>();
    let most = 0;
    let largest = 0;
    const trace = (e: TraceEntry) => {
      if (e.direction === "out" && e.command === "WRTE") {
        inFlight.set(e.arg0, (inFlight.get(e.arg0) ?? 0) + 1);
        most = Math.max(most, inFlight.get(e.arg0) as number);
        largest = Math.max(largest, e.data.length);
      } else if (e.direction === "in" && e.command === "OKAY") inFlight.set(e.arg1, 0);
    };
    await using dev = await startFakeDevice(server, { maxData: 4096, files: { "/sdcard/big.bin": big }, trace });
    const out = await server.adb(["-s", dev.serial, "exec-out", "cat", "/sdcard/big.bin"]);
    const echoed = await server.adb(["-s", dev.serial, "shell", "cat"], { stdin: big.subarray(0, 100_000) });
    expect([
      out.bytes.length,
      Buffer.from(out.bytes).equals(Buffer.from(big)),
      Buffer.from(echoed.bytes).equals(Buffer.from(big.subarray(0, 100_000))),
    ]).toEqual([300_000, true, true]);
    expect({ most, largest }).toEqual({ most: 1, largest: 4096 });
  });

  test("announce with another system type changes the state adb reports", async () => {
    await using dev = await startFakeDevice(server);
    dev.adbd.announce("recovery");
    expect((await server.waitForState(dev.serial, "recovery")).find((d) => d.serial === dev.serial)).toEqual({
      serial: dev.serial,
      state: "recovery",
    });
  });

  test("am start and dumpsys window report the launched activity", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario, foreground: "com.android.launcher3" });
    const start = await server.adb([
      "-s",
      dev.serial,
      "shell",
      "am",
      "start",
      "-W",
      "-n",
      `${DEMO_PACKAGE}/.LoginActivity`,
    ]);
    expect(start.stdout).toBe(
      "Starting: Intent { cmp=com.example.app/.LoginActivity }\nStatus: ok\nLaunchState: COLD\nActivity: com.example.app/.LoginActivity\nTotalTime: 0\nWaitTime: 0\nComplete\n",
    );
    const focus = (await server.adb(["-s", dev.serial, "shell", "dumpsys window windows | grep mCurrentFocus"])).stderr;
    expect(focus).toBe("/system/bin/sh: unsupported pipe |\n");
    const lines = (await server.adb(["-s", dev.serial, "shell", "dumpsys", "window"])).stdout.split("\n");
    expect(lines[1]?.replace(/\{\w{7} /, "{H ")).toBe(
      "  mCurrentFocus=Window{H u0 com.example.app/com.example.app.LoginActivity}",
    );
    expect(dev.phone.problems).toEqual(["unsupported pipe | in: dumpsys window windows | grep mCurrentFocus"]);
  });
});
