/**
 * The simulated phone's display rotation: what `settings put system user_rotation` does to it,
 * what `dumpsys input` says about it, and the `settings` refusal of MIUI/ColorOS phones.
 *
 * Only the display's rotation number turns: screenshots and dumps keep the scenario's portrait
 * layout (the scenario has one), so a test can see what the driver asked and read back, not a
 * redrawn screen.
 */
import type { CommandIo } from "./command-io.ts";

/** The four Surface.ROTATION_* values. */
export const ALL_ROTATIONS: readonly number[] = [0, 1, 2, 3];

/**
 * What `settings put` prints on a phone whose settings provider refuses the shell user, and its
 * exit status. The lines are the ones a real phone printed for `settings put global …`
 * (mosmetro-android/mosmetro-android#244; the same SecurityException line in appium/appium#13802
 * and, for `delete`, opendx/agent#6 on a HUAWEI phone); the report is cut off after these frames.
 * No public report shows the refusal of a `system` key, which the research note marks
 * unverified, so the simulated phone prints this one for any namespace. The empty line,
 * `Exception occurred while executing '<verb>':` and exit status 255 (`int res = -1`) come from
 * BasicShellCommandHandler.exec, which catches the exception; all of it goes to stderr.
 */
export function settingsDenied(verb: string, io: CommandIo): number {
  io.err(
    [
      "",
      `Exception occurred while executing '${verb}':`,
      "java.lang.SecurityException: Permission denial: writing to settings requires:android.permission.WRITE_SECURE_SETTINGS",
      "        at com.android.providers.settings.SettingsProvider.enforceWritePermission(SettingsProvider.java:2105)",
      "        at com.android.providers.settings.SettingsProvider.mutateGlobalSetting(SettingsProvider.java:1291)",
      "        at com.android.providers.settings.SettingsProvider.insertGlobalSetting(SettingsProvider.java:1245)",
      "        at com.android.providers.settings.SettingsProvider.call(SettingsProvider.java:398)",
      "        at android.content.ContentProvider.call(ContentProvider.java:2471)",
      "        at android.content.ContentProvider$Transport.call(ContentProvider.java:517)",
      "        at com.android.providers.settings.SettingsService$MyShellCommand.putForUser(SettingsService.java:375)",
      "        at com.android.providers.settings.SettingsService$MyShellCommand.onCommand(SettingsService.java:277)",
      "        at android.os.BasicShellCommandHandler.exec(BasicShellCommandHandler.java:98)",
      "        at android.os.ShellCommand.exec(ShellCommand.java:44)",
      "",
    ].join("\n"),
  );
  return 255;
}

/**
 * The rotation the display shows after a change of either setting: with auto-rotate off,
 * `user_rotation` if the screen may take it (else it stays where it is: an app locked to one
 * orientation, a phone that never turns upside down); with auto-rotate on, portrait (the
 * simulated phone stands upright).
 */
export function rotationAfter(
  settings: ReadonlyMap<string, string>,
  allowed: readonly number[],
  current: number,
): number {
  if (settings.get("system/accelerometer_rotation") !== "0") return allowed.includes(0) ? 0 : current;
  const asked = Number(settings.get("system/user_rotation") ?? "0");
  return allowed.includes(asked) ? asked : current;
}

/**
 * The lines of `dumpsys input` that say the display's rotation. Android 10 and later list the
 * input viewports in AOSP's `DisplayViewport::toString` format (frameworks/native
 * include/input/DisplayViewport.h: type, displayId, uniqueId, port, orientation as a number,
 * logicalFrame, physicalFrame, deviceSize, isActive); Android 12 and older also print
 * `SurfaceOrientation: N` in the touchscreen's section, which appium/appium-adb reads. The rest of
 * the real dump (event hubs, devices, dispatcher state) is not simulated.
 */
export function dumpsysInput(
  sdk: number,
  rotation: number,
  panel: { width: number; height: number; displayId: string; port: number },
): string {
  const turned = rotation % 2 === 1;
  const [w, h] = turned ? [panel.height, panel.width] : [panel.width, panel.height];
  const lines = ["INPUT MANAGER (dumpsys input)", ""];
  if (sdk <= 32) lines.push(`    SurfaceOrientation: ${rotation}`);
  if (sdk >= 29) {
    lines.push(
      `  Viewport INTERNAL: displayId=0, uniqueId=local:${panel.displayId}, port=${panel.port}, orientation=${rotation}, ` +
        `logicalFrame=[0, 0, ${w}, ${h}], physicalFrame=[0, 0, ${w}, ${h}], deviceSize=[${w}, ${h}], isActive=[1]`,
    );
  }
  return `${lines.join("\n")}\n`;
}
