import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { decodePng } from "./png-pixels.ts";
import { PALETTE } from "./screenshot.ts";
import { startFakeSimulators } from "./fake-simulators.ts";

const FIXTURES = join(import.meta.dir, "../../../fixtures/platform/ios/axe");
const U = "8A1C4E2F-3B5D-4F6A-9C7E-1D2B3A4C5E6F";
const SE = "C3D4E5F6-0718-4A2B-8C9D-0E1F2A3B4C5D";
const pick = (r: { exitCode: number | null; text: string; stderr: string }) => ({
  exitCode: r.exitCode,
  stdout: r.text,
  stderr: r.stderr,
});

type Ax = {
  AXUniqueId: string | null;
  AXLabel: string | null;
  AXValue: string | null;
  type: string;
  enabled: boolean;
  children: Ax[];
};
const flat = (n: Ax): Ax[] => [n, ...n.children.flatMap(flat)];
const byId = (roots: Ax[], id: string) => roots.flatMap(flat).find((n) => n.AXUniqueId === id);

/** `printf %q`-style argv of AXe's goldens: spaces inside a word are escaped. */
const goldenArgv = (line: string) =>
  (line.trim().match(/(?:\\ |\S)+/g) ?? []).map((w) => w.replaceAll("\\ ", " ")).slice(1);

describe("fake axe against AXe's captured goldens", () => {
  const cases = readdirSync(join(FIXTURES, "cases"), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);

  test("every captured usage, validation and stdin case prints the same stdout, stderr and exit code", async () => {
    const golden = (c: string, f: string) => readFileSync(join(FIXTURES, "cases", c, f), "utf8");
    await using sim = await startFakeSimulators({ tools: ["axe"], axeVersion: golden("version", "stdout.txt").trim() });
    expect(cases.length).toBe(28);
    for (const c of cases) {
      const stdinFile = readdirSync(join(FIXTURES, "cases", c)).includes("stdin.txt")
        ? golden(c, "stdin.txt")
        : undefined;
      const r = await sim.run(
        "axe",
        goldenArgv(golden(c, "argv.txt")),
        stdinFile === undefined ? {} : { stdin: stdinFile },
      );
      expect({ case: c, ...pick(r) }).toEqual({
        case: c,
        exitCode: Number(golden(c, "exit-code.txt")),
        stdout: golden(c, "stdout.txt"),
        stderr: golden(c, "stderr.txt"),
      });
    }
  });

  test("describe-ui nodes have exactly the key set of the captured schema, with its types", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    const schema = JSON.parse(readFileSync(join(FIXTURES, "describe-ui-schema-types.json"), "utf8")) as {
      path: string;
      type: string;
    }[];
    const nodeKeys = new Set(schema.filter((e) => /^\$\.\[\]\.[^.[]+$/.test(e.path)).map((e) => e.path.slice(5)));
    const typesOf = new Map<string, Set<string>>();
    for (const e of schema)
      typesOf.set(
        e.path.split(".").at(-1) as string,
        (typesOf.get(e.path.split(".").at(-1) as string) ?? new Set()).add(e.type),
      );
    const roots = JSON.parse((await sim.run("axe", ["describe-ui", "--udid", U])).text) as Record<string, unknown>[];
    const typeOf = (v: unknown) =>
      v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "object" ? "object" : typeof v;
    for (const node of flat(roots[0] as unknown as Ax) as unknown as Record<string, unknown>[]) {
      expect(new Set(Object.keys(node))).toEqual(nodeKeys);
      expect(Object.keys(node.frame as object).sort()).toEqual(["height", "width", "x", "y"]);
      for (const k of [
        "AXFrame",
        "children",
        "content_required",
        "custom_actions",
        "enabled",
        "frame",
        "pid",
        "role",
        "role_description",
        "traits",
        "type",
      ]) {
        expect({ k, type: typeOf(node[k]), allowed: typesOf.get(k)?.has(typeOf(node[k])) }).toEqual({
          k,
          type: typeOf(node[k]),
          allowed: true,
        });
      }
      expect(node.traits).toEqual([]);
    }
  });
});

describe("fake axe describe-ui", () => {
  test("the fresh login screen of an iPhone 17 Pro is research Sample B, pretty-printed like Foundation", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    const r = await sim.run("axe", ["describe-ui", "--udid", U]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.text)).toEqual(JSON.parse(readFileSync(join(FIXTURES, "describe-ui-login.json"), "utf8")));
    expect(r.text).toStartWith('[\n  {\n    "AXFrame" : "{{0, 0}, {402, 874}}",\n');
    expect(r.text).toContain('"custom_actions" : [\n\n        ],');
    expect(r.text.endsWith("]\n")).toBe(true);
  });

  test("--point describes the element under the point as a one-element array", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    const r = JSON.parse((await sim.run("axe", ["describe-ui", "--udid", U, "--point", "201,429"])).text) as Ax[];
    expect(r.map((n) => [n.AXUniqueId, n.type, n.enabled])).toEqual([["login.submit", "Button", false]]);
  });

  test("a shut-down or unknown simulator is an Error: line and exit 1", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    expect(pick(await sim.run("axe", ["describe-ui", "--udid", SE]))).toEqual({
      exitCode: 1,
      stdout: "",
      stderr: `Error: Simulator ${SE} is not booted. Current state: Shutdown.\n`,
    });
    expect(pick(await sim.run("axe", ["tap", "-x", "1", "-y", "1", "--udid", "NOPE"]))).toEqual({
      exitCode: 1,
      stdout: "",
      stderr: "Error: No simulator with UDID NOPE was found. Run `axe list-simulators` to see available simulators.\n",
    });
  });
});

describe("fake axe input changes the shared device", () => {
  test("a tap on the switch changes the next describe-ui and the next simctl screenshot", async () => {
    await using sim = await startFakeSimulators();
    const shot = async () => decodePng((await sim.run("xcrun", ["simctl", "io", U, "screenshot", "-"])).stdout);
    expect((await shot()).at(1120, 1030)).toEqual([...PALETTE.light.on]);
    expect(pick(await sim.run("axe", ["tap", "-x", "201", "-y", "356.5", "--udid", U]))).toEqual({
      exitCode: 0,
      stdout: "✓ Tap at (201.0, 356.5) completed successfully\n",
      stderr: "",
    });
    const roots = JSON.parse((await sim.run("axe", ["describe-ui", "--udid", U])).text) as Ax[];
    expect(byId(roots, "login.remember")?.AXValue).toBe("0");
    expect((await shot()).at(1120, 1030)).toEqual([...PALETTE.light.off]);
    expect(sim.device(U).input).toEqual([
      {
        via: "axe",
        kind: "tap",
        x: 201,
        y: 356.5,
        target: "login.remember",
        atMs: expect.any(Number),
        style: "simulator",
      },
    ]);
  });

  test("signing in: taps by point, id and label, the password through --stdin only, then the home screen", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    const secret = "Canary-7f3a!x";
    const steps: [string[], string?][] = [
      [["tap", "-x", "201", "-y", "243", "--udid", U]],
      [["type", "me@example.com", "--udid", U]],
      [["tap", "--id", "login.password", "--udid", U]],
      [["type", "--stdin", "--udid", U], `${secret}\n`],
    ];
    for (const [args, stdin] of steps)
      expect((await sim.run("axe", args, stdin === undefined ? {} : { stdin })).exitCode).toBe(0);
    const login = JSON.parse((await sim.run("axe", ["describe-ui", "--udid", U])).text) as Ax[];
    expect([
      byId(login, "login.email")?.AXValue,
      byId(login, "login.password")?.AXValue,
      byId(login, "login.submit")?.enabled,
    ]).toEqual(["me@example.com", "•".repeat(secret.length), true]);
    expect(pick(await sim.run("axe", ["tap", "--label", "Sign In", "--udid", U]))).toEqual({
      exitCode: 0,
      stdout: "✓ Tap at resolved tap point at (201.0, 429.0) completed successfully\n",
      stderr: "",
    });
    const home = JSON.parse((await sim.run("axe", ["describe-ui", "--udid", U])).text) as Ax[];
    expect(byId(home, "home.welcome")?.AXLabel).toBe("Welcome, me@example.com!");
    const log = sim.readLog("axe");
    expect(log.some((r) => r.argv.join(" ").includes(secret))).toBe(false);
    expect(log.filter((r) => r.stdin !== null).map((r) => r.stdin)).toEqual([`${secret}\n`]);
    expect(JSON.stringify(home)).not.toContain(secret);
  });

  test("type refuses characters off the US keyboard before touching the device, and text starting with - is an unknown option", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    expect(pick(await sim.run("axe", ["type", "naïve", "--udid", U]))).toEqual({
      exitCode: 1,
      stdout: "",
      stderr: "Error: No keycode found for character: 'ï'\n",
    });
    expect((await sim.run("axe", ["type", "-x", "--udid", U])).stderr).toStartWith(
      "Error: Unknown option '-x'\nUsage: axe type",
    );
    expect(sim.device(U).input).toEqual([]);
  });

  test("keys: Return moves to the password, Backspace deletes, Cmd+V pastes the simctl pasteboard", async () => {
    await using sim = await startFakeSimulators();
    await sim.run("axe", ["tap", "--id", "login.email", "--udid", U]);
    await sim.run("axe", ["type", "ab", "--udid", U]);
    await sim.run("axe", ["key", "42", "--udid", U]);
    await sim.run("axe", ["key", "40", "--udid", U]);
    await sim.run("xcrun", ["simctl", "pbcopy", U], { stdin: "pässwörd" });
    expect((await sim.run("axe", ["key-combo", "--modifiers", "227", "--key", "25", "--udid", U])).exitCode).toBe(0);
    expect(sim.device(U).ui["com.acme.app"]).toMatchObject({ email: "a", password: "pässwörd", focus: "password" });
    await sim.run("axe", ["key-sequence", "--keycodes", "42,42", "--udid", U]);
    expect(sim.device(U).ui["com.acme.app"]).toMatchObject({ password: "pässwö" });
  });

  test("a scroll gesture moves the home list, a tap opens a row, the back button returns", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    sim.update((s) =>
      Object.assign((s.devices[0] as { ui: Record<string, unknown> }).ui, {
        "com.acme.app": {
          screen: "home",
          tab: "account",
          email: "",
          password: "",
          remember: true,
          focus: null,
          error: "",
          user: "me",
          count: 0,
          selected: "",
          scroll: 0,
        },
      }),
    );
    const rows = async () =>
      (JSON.parse((await sim.run("axe", ["describe-ui", "--udid", U])).text) as Ax[])
        .flatMap(flat)
        .filter((n) => n.AXUniqueId?.startsWith("home.item."))
        .map((n) => n.AXLabel);
    expect(await rows()).toEqual(["Apples", "Bread", "Cheese", "Dates", "Eggs"]);
    expect(pick(await sim.run("axe", ["gesture", "scroll-up", "--udid", U]))).toEqual({
      exitCode: 0,
      stdout: "",
      stderr: "",
    });
    expect(await rows()).toEqual(["Dates", "Eggs", "Figs", "Grapes", "Honey"]);
    await sim.run("axe", [
      "swipe",
      "--start-x",
      "200",
      "--start-y",
      "300",
      "--end-x",
      "200",
      "--end-y",
      "500",
      "--duration",
      "0.2",
      "--udid",
      U,
    ]);
    expect(await rows()).toEqual(["Apples", "Bread", "Cheese", "Dates", "Eggs"]);
    await sim.run("axe", ["tap", "--label", "Cheese", "--udid", U]);
    expect(sim.device(U).ui["com.acme.app"]).toMatchObject({ screen: "detail", selected: "Cheese" });
    await sim.run("axe", ["tap", "--id", "BackButton", "--udid", U]);
    expect(sim.device(U).ui["com.acme.app"]).toMatchObject({ screen: "home" });
  });

  test("the home button shows the home screen; tapping an icon launches that app", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    expect(pick(await sim.run("axe", ["button", "home", "--udid", U]))).toEqual({
      exitCode: 0,
      stdout: "",
      stderr: "",
    });
    const springboard = JSON.parse((await sim.run("axe", ["describe-ui", "--udid", U])).text) as Ax[];
    expect(springboard.flatMap(flat).map((n) => n.AXLabel)).toEqual(["SpringBoard", "Acme", "Safari", "Settings"]);
    await sim.run("axe", ["tap", "--label", "Settings", "--udid", U]);
    expect(sim.device(U).foreground).toBe("com.apple.Preferences");
  });

  test("selector taps fail with AXe's warning and error when nothing matches", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    const msg =
      "No accessibility element matched --id 'nope'. Make sure the app is on the expected screen, then run `axe describe-ui --udid <SIMULATOR_UDID>` and prefer --id when available.";
    expect(pick(await sim.run("axe", ["tap", "--id", "nope", "--udid", U]))).toEqual({
      exitCode: 1,
      stdout: "",
      stderr: `Warning: ${msg} No tap performed.\nError: ${msg}\n`,
    });
  });

  test("batch runs two taps in one process (a double tap), and touch --down --up --delay is a long press", async () => {
    await using sim = await startFakeSimulators({ tools: ["axe"] });
    sim.update(
      (s) =>
        void ((s.devices[0] as { ui: Record<string, unknown> }).ui["com.acme.app"] = {
          screen: "home",
          tab: "account",
          email: "",
          password: "",
          remember: true,
          focus: null,
          error: "",
          user: "me",
          count: 0,
          selected: "",
          scroll: 0,
        }),
    );
    const r = await sim.run("axe", [
      "batch",
      "--udid",
      U,
      "--step",
      "tap -x 201 -y 226",
      "--step",
      "tap -x 201 -y 226",
    ]);
    expect(pick(r)).toEqual({ exitCode: 0, stdout: "✓ Batch completed successfully (2 steps)\n", stderr: "" });
    expect(sim.device(U).ui["com.acme.app"]).toMatchObject({ count: 2 });
    await sim.run("axe", ["touch", "-x", "201", "-y", "226", "--down", "--up", "--delay", "1.0", "--udid", U]);
    expect(sim.device(U).input.at(-1)).toEqual({
      via: "axe",
      kind: "long-press",
      x: 201,
      y: 226,
      durationS: 1,
      target: "home.counter",
      atMs: expect.any(Number),
    });
    expect(sim.readLog("axe").length).toBe(2);
  });
});
