import { afterAll, beforeAll, expect, test } from "bun:test";
import { Readable } from "node:stream";
import { Adb } from "@devicefarmer/adbkit";
import { type AdbServer, startAdbServer } from "./adb-server.ts";
import { demoScenario } from "./demo-scenario.ts";
import { startFakeDevice } from "./fake-device.ts";
import { describeWithAdb } from "./with-adb.ts";

let server: AdbServer;
beforeAll(async () => {
  server = await startAdbServer();
});
afterAll(async () => {
  await server?.stop();
});

/** Records a tracker's events as [serial, "add offline" | "change device" | …]; `until` waits for one. */
function recordEvents(tracker: NodeJS.EventEmitter) {
  const events: [string, string][] = [];
  const waiters: (() => void)[] = [];
  for (const kind of ["add", "change", "remove"]) {
    tracker.on(kind, (d: { id: string; type: string }) => {
      events.push([d.id, `${kind} ${d.type}`]);
      waiters.splice(0).forEach((w) => w());
    });
  }
  const of = (serial: string) => events.filter(([id]) => id === serial).map(([, e]) => e);
  const until = async (serial: string, ...any: string[]) => {
    while (!of(serial).some((e) => any.includes(e))) await new Promise<void>((r) => waiters.push(r));
  };
  return { of, until };
}

describeWithAdb("adbkit against the simulated device", () => {
  test("shell with readAll, getProperties and screencap return the phone's output", async () => {
    await using dev = await startFakeDevice(server, {
      scenario: demoScenario,
      props: { "ro.product.model": "Pixel_Kit" },
    });
    const client = Adb.createClient({ port: server.port });
    const device = client.getDevice(dev.serial);
    expect((await client.listDevices()).filter((d: { id: string }) => d.id === dev.serial)).toEqual([
      { id: dev.serial, type: "device" },
    ]);
    expect((await Adb.util.readAll(await device.shell("echo hi"))).toString()).toBe("hi\n");
    const props = await device.getProperties();
    expect([props["ro.product.model"], props["ro.build.version.sdk"]]).toEqual(["Pixel_Kit", "29"]);
    const png = await Adb.util.readAll(await device.screencap());
    expect(new Uint8Array(png)).toEqual(dev.phone.screenshot());
    expect(dev.phone.serviceLog.map((s) => [s.kind, s.command])).toEqual([
      ["shell", "echo hi"],
      ["shell", "getprop"],
      ["shell", "echo && screencap -p 2>/dev/null"],
    ]);
  });

  test("shell with an array quotes each argument so input text gets one argument", async () => {
    await using dev = await startFakeDevice(server, { scenario: demoScenario });
    const device = Adb.createClient({ port: server.port }).getDevice(dev.serial);
    await Adb.util.readAll(await device.shell(["input", "tap", "540", "440"]));
    await Adb.util.readAll(await device.shell(["input", "text", "it's me"]));
    expect([dev.phone.runtime().state.username, dev.phone.serviceLog.at(-1)?.command]).toEqual([
      "it's me",
      "'input' 'text' 'it'\"'\"'s me'",
    ]);
  });

  test("push and pull move files through the sync service", async () => {
    await using dev = await startFakeDevice(server);
    const device = Adb.createClient({ port: server.port }).getDevice(dev.serial);
    const transfer = await device.push(Readable.from([Buffer.from("pushed bytes")]), "/sdcard/in.txt");
    await new Promise((resolve, reject) => transfer.on("end", resolve).on("error", reject));
    expect(dev.phone.files.text("/sdcard/in.txt")).toBe("pushed bytes");
    dev.phone.files.put("/sdcard/out.txt", "from phone");
    expect((await Adb.util.readAll(await device.pull("/sdcard/out.txt"))).toString()).toBe("from phone");
    expect((await device.readdir("/sdcard")).map((e: { name: string }) => e.name).sort()).toEqual([
      "in.txt",
      "out.txt",
    ]);
  });

  test("trackDevices sees the device added on connect and removed on unplug", async () => {
    const tracker = await Adb.createClient({ port: server.port }).trackDevices();
    try {
      const { of, until } = recordEvents(tracker);
      const dev = await startFakeDevice(server);
      await until(dev.serial, "add device", "change device");
      await dev.unplug();
      await until(dev.serial, "remove device");
      // adb lists a TCP device as offline while the CNXN exchange is under way, unless the
      // exchange finishes before the tracker's first update.
      expect([
        ["add offline", "change device", "remove device"],
        ["add device", "remove device"],
      ]).toContainEqual(of(dev.serial));
    } finally {
      tracker.end();
    }
  });
});
