/** `devicerail launch` of an Android app with several launcher activities: the typed error lists them, `--activity` picks one. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  ADB_PATH,
  type AdbServer,
  demoScenario,
  describeWithAdb,
  type FakeDevice,
  type Scenario,
  screenRoot,
  startAdbServer,
  startFakeDevice,
} from "../support/adb-device/index.ts";
import { tempDataDir } from "../support/daemon.ts";
import { cli } from "./run.ts";

const MULTI: Scenario = {
  package: "com.example.multi",
  activity: "com.example.multi.MainActivity",
  extraLaunchers: ["com.example.multi.debug.DebugActivity"],
  initial: "main",
  state: {},
  screens: { main: (_s, view) => screenRoot(view, [{ className: "android.widget.TextView", text: "Multi" }]) },
};

let server: AdbServer;
let phone: FakeDevice;
beforeAll(async () => {
  server = await startAdbServer();
  phone = await startFakeDevice(server, { scenario: demoScenario });
  phone.phone.install(MULTI);
});
afterAll(async () => {
  await phone?.[Symbol.asyncDispose]();
  await server?.stop();
});

const env = () => ({
  DEVICERAIL_ANDROID: "auto",
  DEVICERAIL_ADB_PATH: ADB_PATH,
  ANDROID_ADB_SERVER_PORT: String(server.port),
  DEVICERAIL_DATA_DIR: tempDataDir(),
});

describeWithAdb("devicerail launch with several launcher activities", () => {
  test("launch fails naming the launcher activities, and --activity starts the one named", async () => {
    const refused = await cli(["launch", "com.example.multi"], env());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "com.example.multi has 2 launcher activities and no default among them: com.example.multi.MainActivity, com.example.multi.debug.DebugActivity.",
    );
    expect(phone.phone.foreground).not.toBe("com.example.multi");
    const r = await cli(["launch", "com.example.multi", "--activity", ".debug.DebugActivity", "--json"], env());
    expect(r.code).toBe(0);
    expect(phone.phone.foreground).toBe("com.example.multi");
    expect(phone.phone.commandLog.filter((c) => c.argv[0] === "am").at(-1)?.argv).toEqual([
      "am",
      "start",
      "-W",
      "--user",
      "current",
      "-n",
      "com.example.multi/com.example.multi.debug.DebugActivity",
    ]);
  }, 60_000);
});
