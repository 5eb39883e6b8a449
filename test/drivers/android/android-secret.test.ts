/**
 * inputSecret and elements.typeText({secret}) over the real adb server: the canary sweep. The
 * secret may cross to the phone only as stdin of a fixed script; it must not appear in any host
 * process argv, adb service string, returned value, error or log line.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type AdbServer, DEMO_PACKAGE, describeWithAdb, startAdbServer } from "../../support/adb-device/index.ts";
import {
  attach,
  clearLogs,
  ctx,
  driverError,
  invalidArguments,
  platformError,
  recordingLogger,
} from "../../support/adb-device/driver-harness.ts";
import { canaryForms, leaksIn, processArgvs } from "../../support/canary.ts";

let server: AdbServer;
beforeAll(async () => {
  server = await startAdbServer();
});
afterAll(async () => {
  await server?.stop();
});

// Printable ASCII with blanks at both ends, quotes, a backslash at the end and shell syntax.
const CANARY = ` c4n4ry-"7f3a\\9e' $(id) \`x\` secret\\`;
const FORMS = canaryForms(CANARY);
const leaks = (where: string, text: string) => leaksIn(FORMS, where, text);

const errorText = (e: { code: string; data: unknown }) => JSON.stringify(e);
const FIXED_SCRIPT = /^IFS= read -r (\w+) && input text "\$\1"; echo "\n__\w+\$\?"$/;

describeWithAdb("AndroidDriver inputSecret", () => {
  test("types the secret through the stdin of a fixed script and shows it nowhere else when in flight", async () => {
    const log = recordingLogger();
    await using a = await attach(server, { log });
    await a.driver.execute(a.id, { name: "tap", arguments: { x: 540, y: 600 } }, ctx());
    clearLogs(a.phone);
    a.phone.faults.slow.set("input", 300);
    const typing = a.phone.waitForCommand("input");
    const call = a.driver.execute(a.id, { name: "inputSecret", arguments: { secret: CANARY } }, ctx());
    await typing;
    const inFlight = leaks("process argv", processArgvs());
    const result = await call;

    expect([
      result,
      inFlight,
      leaks("result", JSON.stringify(result)),
      leaks("driver log", JSON.stringify(log.lines)),
    ]).toEqual([{ output: { accepted: true } }, [], [], []]);
    expect(a.phone.runtime(DEMO_PACKAGE).state.password).toBe(CANARY);
    // The typed value is then read back from one UI dump (a password field, so not compared).
    const typed = a.phone.serviceLog.filter((s) => !s.command.includes("uiautomator dump"));
    expect([
      typed.map((s) => ({ ...s, command: FIXED_SCRIPT.test(s.command) ? "<fixed script>" : s.command })),
      a.phone.serviceLog.length - typed.length,
    ]).toEqual([[{ kind: "shell", command: "<fixed script>", stdin: `${CANARY}\n`, exitCode: 0 }], 1]);
    // Android's `input` takes text only in its argv, so on the phone the fixed script expands the
    // secret into `input text "$v"` itself: that device-side argv is the one place it shows.
    expect(a.phone.commandLog.filter((r) => leaks("argv", r.argv.join("\0")).length > 0)).toEqual([
      { argv: ["input", "text", CANARY], origin: "command-line", exitCode: 0 },
    ]);
    expect(a.phone.problems).toEqual([]);
  });

  test("fails without the secret in the error, its detail or the log when the script fails", async () => {
    const log = recordingLogger();
    await using a = await attach(server, { log });
    a.phone.commands.set("input", (argv, io) => (io.err(`input: cannot type ${argv.join(" ")}\n`), 1));
    let thrown: unknown;
    const viaExecute = await driverError(
      a.driver.execute(a.id, { name: "inputSecret", arguments: { secret: CANARY } }, ctx()).catch((e) => {
        thrown = e;
        throw e;
      }),
    );
    const viaElements = await driverError(a.driver.elements.typeText(a.id, CANARY, { secret: true }, ctx()));
    expect([viaExecute, viaElements]).toEqual([
      platformError("android_adb_protected_operation_failed", true),
      platformError("android_adb_protected_operation_failed", true),
    ]);
    const e = thrown as Error & { detail?: string };
    expect([
      ...leaks("error", errorText(viaExecute) + e.message + (e.detail ?? "") + (e.stack ?? "")),
      ...leaks("log", JSON.stringify(log.lines)),
    ]).toEqual([]);
  });

  test("fails before running anything and without echoing the secret when it has %s or non-printable characters", async () => {
    await using a = await attach(server);
    const bad = ["pass%sword", "tab\there", "new\nline", "caf\u00e9", "bell\u0007", "x".repeat(1025)];
    const viaExecute = [];
    const viaElements = [];
    for (const secret of bad) {
      viaExecute.push(await driverError(a.driver.execute(a.id, { name: "inputSecret", arguments: { secret } }, ctx())));
      viaElements.push(await driverError(a.driver.elements.typeText(a.id, secret, { secret: true }, ctx())));
    }
    expect(viaExecute).toEqual(bad.map(() => invalidArguments("inputSecret")));
    expect(viaElements).toEqual(
      bad.map(() =>
        platformError(
          "android_secret_unsupported",
          false,
          "a protected value on Android must be 1 to 1024 printable ASCII characters without %s",
        ),
      ),
    );
    expect([a.phone.commandLog, a.phone.serviceLog]).toEqual([[], []]);
  });
});
