/**
 * The simulated phone's switches for what real phones do around `uiautomator dump` (issue 24):
 * an animating app, a busy accessibility bridge, odd nodes, KXmlSerializer's refusals, processes
 * with pids (`$$`, `exec`, `ps -A`, `kill`) and legacy shell commands that outlive their stream.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { alreadyRegistered, ILLEGAL_CHARACTER } from "./commands-screen.ts";
import { FakePhone } from "./fake-phone.ts";
import { demoScenario } from "./demo-scenario.ts";
import { PS_HEADER, psRow } from "./processes.ts";
import type { SnapshotNode } from "./scenario.ts";
import { compressTree } from "./uiautomator-xml.ts";
import { type AdbServer, startAdbServer } from "./adb-server.ts";
import { type FakeDevice, startFakeDevice } from "./fake-device.ts";
import { describeWithAdb } from "./with-adb.ts";
import { until } from "../wait.ts";

const dump = (phone: FakePhone, args = "") => phone.runForText(`uiautomator dump${args} /dev/tty`);

describe("FakePhone uiautomator switches", () => {
  test("an animating app makes a plain dump wait out the idle timeout and fail, and a --compressed dump succeed", async () => {
    const phone = new FakePhone({ scenario: demoScenario, uiautomatorIdleTimeoutMs: 150 });
    phone.faults.uiautomatorAnimating = true;
    const t0 = performance.now();
    const plain = await dump(phone);
    const waited = performance.now() - t0;
    expect([plain.err, plain.out, plain.status, waited >= 140]).toEqual([
      "ERROR: could not get idle state.\n",
      "",
      0,
      true,
    ]);
    const compressed = await dump(phone, " --compressed");
    expect([compressed.status, compressed.out]).toEqual([
      0,
      `${phone.dumpXml({ compressed: true })}UI hierchary dumped to: /dev/tty\n`,
    ]);
  });

  test("the idle timeout is uiautomator's real 10 s unless a test shortens it", () => {
    expect(new FakePhone().uiautomatorIdleTimeoutMs).toBe(10_000);
  });

  test("--compressed leaves layout-only views out and moves their children up", () => {
    const node = (over: Partial<SnapshotNode>, children: SnapshotNode[] = []): SnapshotNode =>
      ({
        index: 0,
        text: "",
        resourceId: "",
        className: "android.widget.LinearLayout",
        package: "p",
        contentDesc: "",
        checkable: false,
        checked: false,
        clickable: false,
        enabled: true,
        focusable: false,
        focused: false,
        scrollable: false,
        longClickable: false,
        password: false,
        selected: false,
        bounds: [0, 0, 10, 10],
        children,
        source: null as never,
        ...over,
      }) as SnapshotNode;
    const root = node({ className: "android.widget.FrameLayout" }, [
      node({}, [node({ text: "A" }), node({ index: 1 }, [node({ text: "B" })])]),
      node({ index: 1, text: "C" }),
    ]);
    const out = compressTree(root);
    expect(out.children.map((c) => [c.index, c.text])).toEqual([
      [0, "A"],
      [1, "B"],
      [2, "C"],
    ]);
  });

  test("a holder of the bridge makes every dump print KXml-free 'already registered!' with the framework frames, until it is killed", async () => {
    const phone = new FakePhone({ scenario: demoScenario });
    phone.faults.uiautomationHolder = "io.appium.uiautomator2.server";
    const busy = await dump(phone);
    expect(busy.status).toBe(1);
    expect(busy.err.replace(/Proxy@[0-9a-f]{1,8}already/, "Proxy@HEXalready")).toBe(
      [
        "java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@HEXalready registered!",
        "\tat android.os.Parcel.createException(Parcel.java:1961)",
        "\tat android.os.Parcel.readException(Parcel.java:1921)",
        "\tat android.os.Parcel.readException(Parcel.java:1871)",
        "\tat android.view.accessibility.IAccessibilityManager$Stub$Proxy.registerUiTestAutomationService(IAccessibilityManager.java:409)",
        "\tat android.app.UiAutomationConnection.registerUiTestAutomationServiceLocked(UiAutomationConnection.java:399)",
        "\tat android.app.UiAutomationConnection.connect(UiAutomationConnection.java:97)",
        "\tat android.app.UiAutomation.connect(UiAutomation.java:238)",
        "\tat android.app.UiAutomation.connect(UiAutomation.java:214)",
        "",
      ].join("\n"),
    );
    expect(alreadyRegistered("7e3e486").split("\n")[0]).toBe(
      "java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@7e3e486already registered!",
    );
    const ps = (await phone.runForText("ps -A")).out;
    const row = ps.split("\n").find((l) => l.endsWith(" io.appium.uiautomator2.server"));
    expect(row).toMatch(/^u0_a190 +(\d+) +562 /);
    const pid = Number(/^\S+\s+(\d+)/.exec(row ?? "")?.[1]);
    expect((await phone.runForText(`kill ${pid}`)).status).toBe(0);
    expect([phone.faults.uiautomationHolder, (await dump(phone)).status] as unknown[]).toEqual([null, 0]);
  });

  test("a dump that is still running holds the bridge against the next one", async () => {
    const phone = new FakePhone({ scenario: demoScenario, uiautomatorIdleTimeoutMs: 200 });
    phone.faults.uiautomatorAnimating = true;
    const started = phone.waitForCommand("uiautomator");
    const first = dump(phone);
    await started;
    const second = await dump(phone, " --compressed");
    expect([second.status, second.err.split("\n")[0]?.endsWith("already registered!")]).toEqual([1, true]);
    expect((await first).err).toBe("ERROR: could not get idle state.\n");
  });

  test("KXmlSerializer's refusals print the exception and the serializer's frames as quoted, and write no XML", async () => {
    const phone = new FakePhone({ scenario: demoScenario });
    phone.faults.uiautomatorIllegalChar = "U+0";
    const nul = await dump(phone);
    phone.faults.uiautomatorIllegalChar = "d83d";
    const surrogate = await dump(phone);
    expect([nul.err, nul.out, surrogate.err]).toEqual([
      "java.lang.IllegalArgumentException: Illegal character (U+0)\n" +
        "\tat com.android.org.kxml2.io.KXmlSerializer.reportInvalidCharacter(KXmlSerializer.java:182)\n" +
        "\tat com.android.org.kxml2.io.KXmlSerializer.writeEscaped(KXmlSerializer.java:173)\n" +
        "\tat com.android.org.kxml2.io.KXmlSerializer.attribute(KXmlSerializer.java:495)\n",
      "",
      ILLEGAL_CHARACTER.d83d,
    ]);
    expect(surrogate.err.split("\n")[0]).toBe("java.lang.IllegalArgumentException: Illegal character (d83d)");
  });

  test("odd nodes put inverted bounds, &#0; and a lone surrogate reference into the dump", async () => {
    const phone = new FakePhone({ scenario: demoScenario });
    phone.faults.uiautomatorOddNodes = true;
    const { out } = await dump(phone);
    for (const part of [
      'bounds="[66,1777][1014,1664]"',
      'bounds="[906,0][1074,-823]"',
      'text="a&#0;b"',
      'content-desc="smile &#55357;"',
    ])
      expect(out).toContain(part);
    expect(out.endsWith("</node></hierarchy>UI hierchary dumped to: /dev/tty\n")).toBe(true);
  });
});

describe("FakePhone processes", () => {
  test("ps -A prints toybox's header and columns, byte for byte as a quoted Android 8.1 row", () => {
    // openstf/stf#806 (Nexus 6P, Android 8.1).
    expect(PS_HEADER).toBe(
      "USER           PID  PPID     VSZ    RSS WCHAN            ADDR S NAME                       ",
    );
    expect(
      psRow({
        user: "shell",
        pid: 28030,
        ppid: 21619,
        vsz: 10488,
        rss: 1936,
        wchan: "0",
        addr: "75bb676f20",
        state: "R",
        name: "ps",
      }),
    ).toBe("shell        28030 21619   10488   1936 0          75bb676f20 R ps");
  });

  test("kill exits 1 for a pid that is not running", async () => {
    expect((await new FakePhone().runForText("kill 99999")).status).toBe(1);
  });
});

let server: AdbServer;
beforeAll(async () => {
  server = await startAdbServer();
});
afterAll(async () => {
  await server?.stop();
});

/**
 * Runs `script` through the legacy `shell:` service (adb shell -x), kills the adb client once the
 * phone started `command`, and gives the command's exit status when it ends on the phone.
 */
async function exitAfterHostHangsUp(dev: FakeDevice, command: string, script: string): Promise<number> {
  const started = dev.phone.waitForCommand(command);
  const proc = server.spawnAdb(["-s", dev.serial, "shell", "-x", script]);
  const record = await started;
  proc.kill();
  return until(`${command} to end`, () => record.exitCode ?? undefined);
}

describeWithAdb("FakePhone processes over adb", () => {
  test("$$ is the shell's pid and exec runs the command in it", async () => {
    await using dev = await startFakeDevice(server);
    const r = await server.adb(["-s", dev.serial, "shell", "echo $$ > /data/local/tmp/p; exec ps -A"]);
    const pid = dev.phone.files.text("/data/local/tmp/p")?.trim();
    const row = r.stdout.split("\n").find((l) => /^\S+\s+(\d+)/.exec(l)?.[1] === pid);
    expect([r.stdout.split("\n")[0], row?.endsWith(" R ps")]).toEqual([PS_HEADER, true]);
  });

  test("a legacy shell command that writes nothing outlives its closed stream until it is killed by pid", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario });
    dev.phone.faults.uiautomatorHang = true;
    const started = dev.phone.waitForCommand("uiautomator");
    // -x: no shell protocol, the legacy `shell:` service.
    const proc = server.spawnAdb(["-s", dev.serial, "shell", "-x", "uiautomator dump /dev/tty"]);
    const record = await started;
    proc.kill();
    await proc.exited;
    await until("the stream to close on the phone", () => dev.phone.serviceLog.length > 0 || undefined);
    await Bun.sleep(200);
    const [running] = dev.phone.processes.byName("uiautomator");
    expect([record.exitCode, running !== undefined]).toEqual([null, true]);
    const ps = await server.adb(["-s", dev.serial, "shell", "ps", "-A"]);
    expect(ps.stdout).toContain(` ${running?.pid} `);
    await server.adb(["-s", dev.serial, "shell", "kill", String(running?.pid)]);
    await until("uiautomator to end", () => record.exitCode ?? undefined);
    expect([record.exitCode, dev.phone.processes.byName("uiautomator")]).toEqual([143, []]);
  });

  test("a legacy shell command that writes after the close dies of SIGPIPE", async () => {
    await using dev = await startFakeDevice(server);
    dev.phone.faults.slow.set("echo", 400);
    expect(await exitAfterHostHangsUp(dev, "echo", "echo late")).toBe(141);
  });

  test("with legacyShellHangup the old simulation ends the command when the stream closes", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario, legacyShellHangup: true });
    dev.phone.faults.uiautomatorHang = true;
    expect(await exitAfterHostHangsUp(dev, "uiautomator", "uiautomator dump /dev/tty")).toBe(130);
  });
});
