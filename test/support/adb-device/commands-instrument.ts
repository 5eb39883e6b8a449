/**
 * `am instrument` on the simulated phone. Only the form Appium's driver runs is simulated
 * (appium-uiautomator2-driver@8.7.0 lib/uiautomator2-server/core.ts startInstrumentationProcess):
 *
 *   am instrument -w [--no-window-animation] [-e DISABLE_SUPPRESS_ACCESSIBILITY_SERVICES <bool>]
 *     -e disableAnalytics true io.appium.uiautomator2.server.test/androidx.test.runner.AndroidJUnitRunner
 *
 * With both packages installed it starts the simulated UiAutomator2 server (uia2-server.ts) and
 * runs as long as it does. Without them it fails as ActivityManagerService and am report it (see
 * notFound). Output formats: research note /work/wt/issue27-uia2.md §2.
 */
import type { CommandIo } from "./command-io.ts";
import { unsupported } from "./commands-shell.ts";
import type { FakePhone } from "./fake-phone.ts";
import { UIA2_SERVER_PACKAGE, UIA2_TEST_PACKAGE } from "./apk-catalog.ts";
import { UIA2_INSTRUMENTATION } from "./uia2-server.ts";

/**
 * AMS startInstrumentation reports a missing instrumentation (or target) as a status bundle with
 * `Error` and code -1, which am prints (Instrument.java TextStatusReporter); then am throws
 * AndroidException("INSTRUMENTATION_FAILED: " + component), which BaseCommand.run prints as a stack
 * trace on stderr before System.exit(1) (AOSP core/java/com/android/internal/os/BaseCommand.java).
 * The trace's frames are not known, so only its first line is printed.
 */
function notFound(io: CommandIo, report: string): number {
  io.out(`INSTRUMENTATION_STATUS: Error=${report}\nINSTRUMENTATION_STATUS_CODE: -1\n`);
  io.err(`android.util.AndroidException: INSTRUMENTATION_FAILED: ${UIA2_INSTRUMENTATION}\n`);
  return 1;
}

export async function amInstrument(phone: FakePhone, argv: readonly string[], io: CommandIo): Promise<number> {
  const args = argv.slice(2);
  let wait = false;
  let component: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "-w") wait = true;
    else if (a === "--no-window-animation") continue;
    else if (a === "-e" && i + 2 < args.length) i += 2;
    else if (!a.startsWith("-") && component === null && i === args.length - 1) component = a;
    else return unsupported(phone, argv, io);
  }
  // Without -w am returns at once and prints nothing of the run: not simulated, nor are other instrumentations.
  if (!wait || component !== UIA2_INSTRUMENTATION) return unsupported(phone, argv, io);
  if (!phone.apps.has(UIA2_TEST_PACKAGE))
    return notFound(io, `Unable to find instrumentation info for: ComponentInfo{${UIA2_INSTRUMENTATION}}`);
  if (!phone.apps.has(UIA2_SERVER_PACKAGE))
    return notFound(io, `Unable to find instrumentation target package: ${UIA2_SERVER_PACKAGE}`);
  return phone.uia2.instrument(io);
}
