import { describe, expect, test } from "bun:test";
import { type CommandIo, StdinBuffer, text } from "./command-io.ts";
import { demoScenario } from "./demo-scenario.ts";
import { FakePhone } from "./fake-phone.ts";
import { decodeInputText, keyCodeFromString } from "./input-command.ts";
import { hitTest, type Scenario, ScenarioRuntime, screenRoot, vstack } from "./scenario.ts";
import { toUiautomatorXml } from "./uiautomator-xml.ts";

/** Runs a command line on the phone as the shell service would; returns status and output. */
async function sh(phone: FakePhone, line: string, stdinText?: string) {
  let out = "";
  let err = "";
  const stdin = new StdinBuffer();
  if (stdinText !== undefined) stdin.push(new TextEncoder().encode(stdinText));
  stdin.end();
  const io: CommandIo = {
    stdin,
    out: (d) => void (out += typeof d === "string" ? d : text(d)),
    err: (d) => void (err += typeof d === "string" ? d : text(d)),
    signal: new AbortController().signal,
    unplug: () => {},
  };
  const status = await phone.runCommand({ kind: "shell,v2", command: line, pty: false }, io, stdin);
  return { status, out, err };
}

const demo = () => new FakePhone({ scenario: demoScenario });

describe("input text", () => {
  test("decodeInputText turns %s into a space exactly as Input.sendText does", () => {
    expect(["a%sb", "%s%s", "100%", "%%s", "50%sof", "%x"].map(decodeInputText)).toEqual([
      "a b",
      "  ",
      "100%",
      "% ",
      "50 of",
      "%x",
    ]);
  });

  test("types into the focused field when it gets exactly one argument", async () => {
    const phone = demo();
    await sh(phone, "input tap 540 440 && input text alice%sb && input text \"'q'\"");
    expect(phone.runtime().state.username).toBe("alice b'q'");
    expect(phone.inputLog.slice(1)).toEqual([
      { kind: "text", text: "alice b", target: "username" },
      { kind: "text", text: "'q'", target: "username" },
    ]);
  });

  test("prints the usage error and exits 0 when given two arguments", async () => {
    const phone = demo();
    expect(await sh(phone, "input text two words")).toEqual({
      status: 0,
      out: "",
      err: "Error: Invalid arguments for command: text\nUsage: input [<source>] <command> [<arg>...]\n",
    });
    expect(phone.inputLog).toEqual([]);
  });
});

describe("input keyevent", () => {
  test("keyCodeFromString accepts numbers, KEYCODE_ names and bare names", () => {
    expect(["4", "KEYCODE_DEL", "ENTER", "A", "7", "NOPE"].map(keyCodeFromString)).toEqual([4, 67, 66, 29, 7, 0]);
  });

  test("DEL removes one character and letters type when a field is focused", async () => {
    const phone = demo();
    await sh(phone, "input tap 540 440; input text abc; input keyevent 67 KEYCODE_DEL; input keyevent KEYCODE_Z");
    expect(phone.runtime().state.username).toBe("az");
  });

  test("several codes in one call are pressed in order and DEL deletes before the cursor", async () => {
    const phone = demo();
    await sh(
      phone,
      "input tap 540 440; input text abcd; input keyevent 21 21 67; input keyevent MOVE_HOME 112; input keyevent 123 67",
    );
    expect([
      phone.runtime().state.username,
      phone.inputLog.slice(2).map((r) => (r.kind === "keyevent" ? r.keyCode : r.kind)),
    ]).toEqual(["c", [21, 21, 67, 122, 112, 123, 67]]);
  });

  test("MOVE_END then as many DELs as characters empties the field wherever the cursor was", async () => {
    const phone = demo();
    await sh(phone, "input tap 540 440; input text hello; input keyevent 122");
    await sh(phone, "input keyevent 123 67 67 67 67 67 67 67");
    expect([phone.runtime().state.username, phone.runtime().cursor]).toEqual(["", null]);
  });

  test("PASTE types the clipboard at the cursor and does nothing when the clipboard is empty", async () => {
    const phone = new FakePhone({ scenario: demoScenario, clipboardShell: true });
    await sh(phone, "input tap 540 440; input keyevent 279; input text ab; input keyevent 21");
    expect(await sh(phone, "cmd clipboard set text 'Grüße 東京 👋' && input keyevent 279")).toEqual({
      status: 0,
      out: "",
      err: "",
    });
    expect([phone.clipboard, phone.runtime().state.username, phone.inputLog.at(-1)]).toEqual([
      "Grüße 東京 👋",
      "aGrüße 東京 👋b",
      { kind: "keyevent", keyCode: 279, longpress: false, target: "username" },
    ]);
  });

  test("BACK returns to the previous screen and leaves the app at its root", async () => {
    const phone = demo();
    const rt = phone.runtime();
    Object.assign(rt.state, { user: "a" });
    rt.screen = "home";
    await sh(phone, "input tap 540 620");
    expect([rt.screen, rt.state.selected]).toEqual(["detail", "Apples"]);
    await sh(phone, "input keyevent 4");
    expect([rt.screen, phone.foreground]).toEqual(["home", "com.example.app"]);
    await sh(phone, "input keyevent BACK");
    expect(phone.foreground).toBe("com.android.launcher3");
  });
});

describe("scenario", () => {
  test("vstack stacks items with padding and gap and nests children without bounds", () => {
    const nodes = vstack({ width: 1000, padding: 50, gap: 10 }, [
      { text: "a", height: 100 },
      { text: "hidden", visible: false },
      { text: "b", height: 200, padding: 5, gap: 0, children: [{ text: "c", height: 40 }, { text: "d" }] },
    ]);
    expect(nodes.map((n) => [n.text, n.bounds, n.children?.map((c) => c.bounds)])).toEqual([
      ["a", [50, 50, 950, 150], undefined],
      ["hidden", undefined, undefined],
      [
        "b",
        [50, 160, 950, 360],
        [
          [55, 165, 945, 205],
          [55, 205, 945, 325],
        ],
      ],
    ]);
  });

  test("hitTest picks the topmost enabled clickable node, later siblings winning", () => {
    const scenario: Scenario = {
      package: "p",
      activity: "p.A",
      initial: "s",
      state: {},
      screens: {
        s: (_s, view) =>
          screenRoot(view, [
            { resourceId: "under", clickable: true, bounds: [0, 0, 100, 100] },
            { resourceId: "over", clickable: true, bounds: [50, 50, 150, 150] },
            { resourceId: "disabled", clickable: true, enabled: false, bounds: [60, 60, 70, 70] },
          ]),
      },
    };
    const root = new ScenarioRuntime(scenario, { log() {}, launch() {}, background() {} }).snapshot({
      width: 200,
      height: 200,
    });
    const at = (x: number, y: number) => hitTest(root, x, y, (n) => n.clickable && n.enabled)?.resourceId ?? null;
    expect([at(10, 10), at(75, 75), at(65, 65), at(150, 150), at(199, 199)]).toEqual([
      "under",
      "over",
      "over",
      null,
      null,
    ]);
  });

  test("a password field is masked in the dump and the error text appears after a failed sign in", async () => {
    const phone = demo();
    await sh(phone, "input tap 540 600; input text pw%s1; input tap 540 935");
    const nodes = phone.tree().children.map((n) => [n.resourceId.split("/")[1], n.text, n.password, n.focused]);
    expect(nodes).toEqual([
      ["title", "Sign in", false, false],
      ["username", "Username", false, false],
      ["password", "\u2022\u2022\u2022\u2022", true, true],
      ["remember", "Remember me", false, false],
      ["sign_in", "SIGN IN", false, false],
      ["error", "Enter username and password", false, false],
    ]);
  });

  test("toUiautomatorXml writes attributes in dumper order on one line with NAF and escaping", () => {
    const scenario: Scenario = {
      package: "com.x",
      activity: "com.x.A",
      initial: "s",
      state: {},
      screens: {
        s: () => ({
          className: "android.widget.FrameLayout",
          bounds: [0, 0, 10, 20],
          children: [
            { clickable: true, bounds: [1, 2, 3, 4] },
            { text: 'a<"&>\n', bounds: [0, 0, 1, 1] },
          ],
        }),
      },
    };
    const xml = toUiautomatorXml(
      new ScenarioRuntime(scenario, { log() {}, launch() {}, background() {} }).snapshot({ width: 10, height: 20 }),
    );
    const flags = (c: boolean) =>
      `checkable="false" checked="false" clickable="${c}" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false"`;
    expect(xml).toBe(
      `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">` +
        `<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.x" content-desc="" ${flags(false)} bounds="[0,0][10,20]">` +
        `<node NAF="true" index="0" text="" resource-id="" class="android.view.View" package="com.x" content-desc="" ${flags(true)} bounds="[1,2][3,4]" />` +
        `<node index="1" text="a&lt;&quot;&amp;&gt;&#10;" resource-id="" class="android.widget.TextView" package="com.x" content-desc="" ${flags(false)} bounds="[0,0][1,1]" />` +
        `</node></hierarchy>`,
    );
  });
});

describe("FakePhone commands", () => {
  test("getprop lists every property sorted and prints one or a default", async () => {
    const phone = new FakePhone({ props: { "ro.product.model": "Pixel_Test" } });
    const all = (await sh(phone, "getprop")).out.split("\n");
    expect([all[0], all.includes("[ro.product.model]: [Pixel_Test]")]).toEqual(["[ro.build.type]: [user]", true]);
    expect((await sh(phone, "getprop ro.build.version.sdk; getprop no.such def; getprop no.such")).out).toBe(
      "29\ndef\n\n",
    );
  });

  test("wm size and density report the physical values and overrides", async () => {
    const phone = new FakePhone({ screen: { width: 720, height: 1600, density: 320 } });
    await sh(phone, "wm size 600x1000");
    expect((await sh(phone, "wm size; wm density")).out).toBe(
      "Physical size: 720x1600\nOverride size: 600x1000\nPhysical density: 320\n",
    );
    expect(phone.view).toEqual({ width: 600, height: 1000 });
  });

  test("am start by component and by VIEW URL, then dumpsys window shows the focus", async () => {
    const phone = new FakePhone({ scenario: demoScenario, foreground: "com.android.launcher3" });
    expect(await sh(phone, "am start -n com.example.app/.LoginActivity")).toEqual({
      status: 0,
      out: "Starting: Intent { cmp=com.example.app/.LoginActivity }\n",
      err: "",
    });
    expect(
      (await sh(phone, "dumpsys window windows")).out
        .split("\n")
        .slice(1, 3)
        .map((l) => l.replace(/\{[0-9a-f]{7} /g, "{H ")),
    ).toEqual([
      "  mCurrentFocus=Window{H u0 com.example.app/com.example.app.LoginActivity}",
      "  mFocusedApp=AppWindowToken{H token=Token{H ActivityRecord{H u0 com.example.app/.LoginActivity t13}}}",
    ]);
    expect(await sh(phone, "am start -a android.intent.action.VIEW -d 'https://example.com:8080/a?b=1'")).toEqual({
      status: 0,
      out: "Starting: Intent { act=android.intent.action.VIEW dat=https://example.com:8080/... }\n",
      err: "",
    });
    expect([phone.foreground, phone.apps.get("com.android.chrome")?.url]).toEqual([
      "com.android.chrome",
      "https://example.com:8080/a?b=1",
    ]);
    expect(await sh(phone, "am start -n com.example.app/.Nope")).toEqual({
      status: 1,
      out: "Starting: Intent { cmp=com.example.app/.Nope }\n",
      err: "Error type 3\nError: Activity class {com.example.app/com.example.app.Nope} does not exist.\n",
    });
  });

  test("am force-stop resets the app and monkey launches it again at its first screen", async () => {
    const phone = demo();
    phone.runtime().screen = "home";
    await sh(phone, "am force-stop com.example.app");
    expect(phone.foreground).toBe("com.android.launcher3");
    const r = await sh(phone, "monkey -p com.example.app -c android.intent.category.LAUNCHER 1");
    expect([r.status, r.out.split("\n").at(-3), phone.foreground, phone.runtime().screen]).toEqual([
      0,
      "Events injected: 1",
      "com.example.app",
      "login",
    ]);
  });

  test("cmd package resolve-activity --brief names a package's launcher activity when it has one, else says No activity found", async () => {
    const hidden: Scenario = {
      ...demoScenario,
      package: "com.example.hidden",
      activity: "com.example.hidden.Main",
      launcher: false,
    };
    const phone = demo();
    phone.install(hidden);
    const resolve = (pkg: string) =>
      sh(
        phone,
        `cmd package resolve-activity --brief --user current -a android.intent.action.MAIN -c android.intent.category.LAUNCHER ${pkg}`,
      );
    const found = {
      status: 0,
      out: "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\ncom.android.settings/.Settings\n",
      err: "",
    };
    const none = { status: 0, out: "No activity found\n", err: "" };
    expect([
      await resolve("com.android.settings"),
      await resolve("com.example.missing"),
      await resolve("com.example.hidden"),
      await resolve("com.android.launcher3"),
      await sh(phone, "pm resolve-activity --brief -c android.intent.category.LAUNCHER com.android.settings"),
      phone.foreground,
      phone.problems,
    ]).toEqual([found, none, none, none, found, "com.example.app", []]);
  });

  test("cmd package resolve-activity is a problem when asked without --brief or for an intent the fake cannot resolve", async () => {
    const phone = new FakePhone();
    const r = [
      await sh(phone, "cmd package resolve-activity -c android.intent.category.LAUNCHER com.android.settings"),
      await sh(phone, "cmd package resolve-activity --brief -a android.intent.action.VIEW -d https://x.test"),
    ];
    expect([r.map((x) => x.status), phone.problems]).toEqual([
      [1, 1],
      [
        "unsupported arguments: pm resolve-activity -c android.intent.category.LAUNCHER com.android.settings",
        "unsupported arguments: pm resolve-activity --brief -a android.intent.action.VIEW -d https://x.test",
      ],
    ]);
  });

  test("am start -W -n reports a cold start, a task brought to the front, or an app already in front", async () => {
    const phone = new FakePhone({ scenario: demoScenario, foreground: "com.android.launcher3" });
    const start = (component: string) => sh(phone, `am start -W --user current -n ${component}`);
    const cold = await start("com.android.settings/com.android.settings.Settings");
    const again = await start("com.android.settings/.Settings");
    phone.launch("com.android.launcher3");
    const toFront = await start("com.android.settings/.Settings");
    const warning = "Warning: Activity not started, its current task has been brought to the front\n";
    expect([cold, again, toFront, phone.foreground]).toEqual([
      {
        status: 0,
        out: "Starting: Intent { cmp=com.android.settings/.Settings }\nStatus: ok\nLaunchState: COLD\nActivity: com.android.settings/.Settings\nTotalTime: 0\nWaitTime: 0\nComplete\n",
        err: "",
      },
      {
        status: 0,
        out: `Starting: Intent { cmp=com.android.settings/.Settings }\n${warning}Status: ok\nLaunchState: UNKNOWN (0)\nActivity: com.android.settings/.Settings\nWaitTime: 0\nComplete\n`,
        err: "",
      },
      {
        status: 0,
        out: `Starting: Intent { cmp=com.android.settings/.Settings }\n${warning}Status: ok\nLaunchState: HOT\nActivity: com.android.settings/.Settings\nTotalTime: 0\nWaitTime: 0\nComplete\n`,
        err: "",
      },
      "com.android.settings",
    ]);
  });

  test("am start -W prints an unknown component's error on stdout, and Android 9's report has ThisTime and no LaunchState", async () => {
    const phone = new FakePhone({ scenario: demoScenario, props: { "ro.build.version.sdk": "28" } });
    expect([
      await sh(phone, "am start -W -n com.example.app/.Nope"),
      await sh(phone, "am start -W -n com.android.settings/.Settings"),
    ]).toEqual([
      {
        status: 1,
        out: "Starting: Intent { cmp=com.example.app/.Nope }\nError type 3\nError: Activity class {com.example.app/com.example.app.Nope} does not exist.\n",
        err: "",
      },
      {
        status: 0,
        out: "Starting: Intent { cmp=com.android.settings/.Settings }\nStatus: ok\nActivity: com.android.settings/.Settings\nThisTime: 0\nTotalTime: 0\nWaitTime: 0\nComplete\n",
        err: "",
      },
    ]);
  });

  test("am start -W reports Status: timeout and still starts the activity while faults.launchTimeouts lasts", async () => {
    const phone = demo();
    phone.faults.launchTimeouts = 1;
    const late = await sh(phone, "am start -W -n com.android.settings/.Settings");
    expect([late.out, phone.foreground, phone.faults.launchTimeouts]).toEqual([
      "Starting: Intent { cmp=com.android.settings/.Settings }\nStatus: timeout\nLaunchState: UNKNOWN (0)\nActivity: com.android.settings/.Settings\nWaitTime: 10000\nComplete\n",
      "com.android.settings",
      0,
    ]);
    expect((await sh(phone, "am start -W -n com.android.chrome/com.google.android.apps.chrome.Main")).out).toContain(
      "Status: ok\nLaunchState: COLD\n",
    );
  });

  test("the launcher shows no icon and monkey finds no activity when an app declares no launcher activity", async () => {
    const phone = new FakePhone({ scenario: { ...demoScenario, launcher: false } });
    const r = await sh(phone, "monkey -p com.example.app -c android.intent.category.LAUNCHER 1");
    const icons = phone
      .runtime("com.android.launcher3")
      .snapshot(phone.view)
      .children.map((n) => n.text);
    expect([r.status, r.err, icons]).toEqual([
      1,
      "** No activities found to run, monkey aborted.\n",
      ["Settings", "Chrome"],
    ]);
  });

  test("settings put and get round-trip and a missing key reads null", async () => {
    const phone = new FakePhone();
    expect(
      (await sh(phone, "settings put global stay_on 3 && settings get global stay_on; settings get secure nope")).out,
    ).toBe("3\nnull\n");
  });

  test("sh runs a script from stdin and records its commands as coming from stdin", async () => {
    const phone = demo();
    await sh(phone, "input tap 540 440");
    expect(await sh(phone, "sh", "input text hunter2\necho ok\n")).toEqual({ status: 0, out: "ok\n", err: "" });
    expect(phone.commandLog.slice(1)).toEqual([
      { argv: ["sh"], origin: "command-line", exitCode: 0 },
      { argv: ["input", "text", "hunter2"], origin: "stdin", exitCode: 0 },
      { argv: ["echo", "ok"], origin: "stdin", exitCode: 0 },
    ]);
    expect(phone.serviceLog.at(-1)).toEqual({
      kind: "shell,v2",
      command: "sh",
      stdin: "input text hunter2\necho ok\n",
      exitCode: 0,
    });
  });

  test("an unknown command exits 127 and is a problem when strict, and exits 0 when not", async () => {
    const strict = new FakePhone();
    expect(await sh(strict, "frobnicate --x")).toEqual({
      status: 127,
      out: "",
      err: "/system/bin/sh: frobnicate: inaccessible or not found\n",
    });
    expect(strict.problems).toEqual(["unknown command: frobnicate --x"]);
    const lenient = new FakePhone({ strict: false });
    expect([await sh(lenient, "frobnicate"), lenient.problems]).toEqual([{ status: 0, out: "", err: "" }, []]);
  });

  test("unsupported shell syntax exits 2 and is a problem", async () => {
    const phone = new FakePhone();
    expect(await sh(phone, "getprop | grep x")).toEqual({
      status: 2,
      out: "",
      err: "/system/bin/sh: unsupported pipe |\n",
    });
    expect(phone.problems).toEqual(["unsupported pipe | in: getprop | grep x"]);
  });

  test("cmd clipboard set text takes exactly one argument and any other use is a problem when clipboardShell is true", async () => {
    const phone = new FakePhone({ clipboardShell: true });
    expect(await sh(phone, "cmd clipboard set text two words")).toEqual({
      status: 1,
      out: "",
      err: "fake cmd: unsupported arguments: clipboard set text two words\n",
    });
    expect([phone.clipboard, phone.problems]).toEqual([
      null,
      ["unsupported arguments: cmd clipboard set text two words"],
    ]);
  });

  test("cmd clipboard prints Binder's default error on stderr and exits 0 by default, as every stock Android does", async () => {
    for (const phone of [new FakePhone(), new FakePhone({ clipboardShell: false })]) {
      expect(await sh(phone, "cmd clipboard set text x")).toEqual({
        status: 0,
        out: "",
        err: "No shell command implementation.\n",
      });
      expect([phone.clipboard, phone.problems]).toEqual([null, []]);
    }
  });

  test("a registered command overrides a built-in", async () => {
    const phone = new FakePhone();
    phone.commands.set("getprop", (argv, io) => (io.out(`overridden ${argv.slice(1).join(",")}\n`), 0));
    expect((await sh(phone, "getprop a b")).out).toBe("overridden a,b\n");
  });

  test("screencap caches the PNG per rendered tree", async () => {
    const phone = demo();
    const first = phone.screenshot();
    expect(phone.screenshot()).toBe(first);
    await sh(phone, "input tap 540 760");
    expect([phone.screenshot() === first, phone.renderer.renders]).toEqual([false, 2]);
  });
});
