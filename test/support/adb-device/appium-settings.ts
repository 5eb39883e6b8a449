/**
 * What the installed io.appium.settings 8.0.10 app answers on the simulated phone: its broadcast
 * receivers (clipboard, location, notifications), its LocationService and the foreground service
 * that `dumpsys activity services` shows. Behaviour follows the app's Java sources
 * (github:appium/io.appium.settings app/src/main/java/io/appium/settings/…, mirror at tag v7.1.9,
 * older than 8.0.10) and the 8.0.10 README and JS wrapper (npm io.appium.settings@8.0.10
 * README.md, build/lib/*.js). `am` prints the result as AOSP ActivityManagerShellCommand's
 * IntentReceiver.performReceive does: `Broadcast completed: result=<code>` plus `, data="<data>"`
 * when the data is not null, the data verbatim (quotes are not escaped; stored public copy index
 * id 41330587299).
 */
import { SETTINGS_APP_PACKAGE } from "./apk-catalog.ts";
import type { CommandIo } from "./command-io.ts";
import type { FakePhone } from "./fake-phone.ts";

const PKG = SETTINGS_APP_PACKAGE;
/** Activity.RESULT_OK and RESULT_CANCELED, as `am` prints them. */
const RESULT_OK = -1;
const RESULT_CANCELED = 0;

export interface BroadcastIntent {
  action?: string;
  component?: string;
  package?: string;
  extras: Record<string, string>;
}

export interface BroadcastResult {
  code: number;
  data: string | null;
}

/** A notification the NLService has seen (FakePhone.postNotification). */
export interface PostedNotification {
  packageName: string;
  id?: number;
  tag?: string | null;
  title?: string | null;
  bigTitle?: string | null;
  text?: string | null;
  bigText?: string | null;
  tickerText?: string | null;
  subText?: string | null;
  infoText?: string | null;
  template?: string | null;
  isClearable?: boolean;
  isOngoing?: boolean;
  isGroup?: boolean;
  postTime?: number;
  isRemoved?: boolean;
}

export interface PhoneLocation {
  latitude: number;
  longitude: number;
  altitude: number;
}

/** The app's state on the phone, as `phone.appiumSettings`. */
export class AppiumSettingsState {
  /** The location apps get: the mocked one while LocationService mocks it, else whatever a test sets (null: no fix). */
  location: PhoneLocation | null = null;
  /** LocationService is running (started, not stopped, app not force-stopped). */
  locationService = false;
  /** The NLService buffer, newest first, at most 100 (NLService.MAX_BUFFER_SIZE). */
  readonly notifications: PostedNotification[] = [];
}

/** `pkg/.Cls` or `pkg/pkg.Cls` → the full class name. */
function classOf(component: string): [string, string] {
  const [pkg, cls = ""] = component.split("/", 2) as [string, string?];
  return [pkg, cls.startsWith(".") ? `${pkg}${cls}` : cls];
}

const RECEIVERS: Record<string, string> = {
  [`${PKG}.receivers.ClipboardReceiver`]: "io.appium.settings.clipboard.get",
  [`${PKG}.receivers.LocationInfoReceiver`]: "io.appium.settings.location",
  // Registered only at run time by ForegroundService (SettingsReceivers.java); not in the manifest.
  [`${PKG}.receivers.NotificationsReceiver`]: "io.appium.settings.notifications",
};
const MANIFEST_ONLY_UNSIMULATED = [
  "WiFiConnectionSettingReceiver",
  "AnimationSettingReceiver",
  "LocaleSettingReceiver",
  "LocalesReader",
  "BluetoothConnectionSettingReceiver",
  "UnpairBluetoothDevicesReceiver",
  "SmsReader",
  "MediaScannerReceiver",
].map((r) => `${PKG}.receivers.${r}`);

/** The app process runs (its Settings activity was started and not force-stopped): ForegroundService has registered every receiver. */
export function settingsAppRunning(phone: FakePhone): boolean {
  return phone.packages.installed.has(PKG) && (phone.apps.get(PKG)?.runtime ?? null) !== null;
}

/**
 * The receiver of the app that gets `intent`, or null when none does. An explicit component
 * reaches a manifest receiver even when the app is not running (README:433-435: "You have to
 * specify the receiver class if the app has never been executed before"); an implicit broadcast
 * reaches only the receivers ForegroundService registered, so only while the app runs (Android 8+
 * delivers no implicit broadcast to manifest receivers).
 */
function receiverFor(phone: FakePhone, intent: BroadcastIntent): string | "unsimulated" | null {
  if (!phone.packages.installed.has(PKG)) return null;
  if (intent.component) {
    const [pkg, cls] = classOf(intent.component);
    if (pkg !== PKG) return null;
    if (MANIFEST_ONLY_UNSIMULATED.includes(cls)) return "unsimulated";
    return cls in RECEIVERS && !cls.endsWith("NotificationsReceiver") ? cls : null;
  }
  if (intent.package && intent.package !== PKG) return null;
  if (!settingsAppRunning(phone)) return null;
  const hit = Object.entries(RECEIVERS).find(([, action]) => action === intent.action);
  if (hit) return hit[0];
  return intent.action?.startsWith("io.appium.settings.") ? "unsimulated" : null;
}

/** The app's answer to a broadcast, null when no receiver of the app gets it, "unsimulated" for its receivers the fake does not model. */
export function settingsBroadcast(phone: FakePhone, intent: BroadcastIntent): BroadcastResult | "unsimulated" | null {
  const receiver = receiverFor(phone, intent);
  if (receiver === null || receiver === "unsimulated") return receiver;
  if (receiver.endsWith("ClipboardReceiver")) return clipboard(phone);
  if (receiver.endsWith("LocationInfoReceiver")) return locationInfo(phone);
  return notifications(phone);
}

/**
 * ClipboardReceiver.java: RESULT_OK and the base64 (NO_WRAP) of the clip's UTF-8 text, `""` when
 * there is no clip. From Android 10 ClipboardService lets an app read the clipboard only while it
 * is the default IME or has focus (ClipboardService.clipboardAccessAllowed / isDefaultIme, AOSP,
 * stored public copy index id 120212777; README:259-273), else hasPrimaryClip() is false and the
 * receiver answers RESULT_OK with `""`.
 */
function clipboard(phone: FakePhone): BroadcastResult {
  const sdk = Number(phone.props.get("ro.build.version.sdk") ?? 29);
  const ime = phone.ime.selected ?? "";
  const allowed = sdk < 29 || ime.startsWith(`${PKG}/`) || phone.foreground === PKG;
  if (!allowed || phone.clipboard === null) return { code: RESULT_OK, data: "" };
  return { code: RESULT_OK, data: Buffer.from(phone.clipboard, "utf8").toString("base64") };
}

/**
 * LocationInfoReceiver.java: RESULT_OK and `%.7f %.7f %.7f` (Locale.US) of latitude, longitude and
 * altitude, or RESULT_CANCELED and `""` when the tracker has no location. Without
 * ACCESS_FINE_LOCATION the tracker cannot start, so the fake answers as with no location.
 */
function locationInfo(phone: FakePhone): BroadcastResult {
  const loc = phone.appiumSettings.location;
  const granted = phone.packages.installed.get(PKG)?.granted.has("android.permission.ACCESS_FINE_LOCATION");
  if (!loc || !granted) return { code: RESULT_CANCELED, data: "" };
  const f = (n: number) => n.toFixed(7);
  return { code: RESULT_OK, data: `${f(loc.latitude)} ${f(loc.longitude)} ${f(loc.altitude)}` };
}

/**
 * NotificationsReceiver.java: RESULT_OK with `{"statusBarNotifications":[…]}` (StoredNotification.toJson,
 * keys in its insertion order, as Android's org.json keeps them), or RESULT_OK with its
 * no-access message when `enabled_notification_listeners` names no component of the app.
 */
function notifications(phone: FakePhone): BroadcastResult {
  const listeners = (phone.settings.get("secure/enabled_notification_listeners") ?? "").split(":");
  if (!listeners.some((c) => c.startsWith(`${PKG}/`)))
    return {
      code: RESULT_OK,
      data:
        "Appium Settings helper has no access to the system notifications. " +
        "The access must be granted manually via 'Notification access' page in device Settings.",
    };
  const items = phone.appiumSettings.notifications.map((n) => {
    const id = n.id ?? 1;
    const tag = n.tag ?? null;
    const key = `0|${n.packageName}|${id}|${tag}|10100`;
    const s = (v: string | null | undefined) => v ?? null;
    return {
      packageName: n.packageName,
      isClearable: n.isClearable ?? true,
      isOngoing: n.isOngoing ?? false,
      id,
      tag,
      postTime: n.postTime ?? 0,
      isRemoved: n.isRemoved ?? false,
      notification: {
        title: s(n.title),
        bigTitle: s(n.bigTitle),
        text: s(n.text),
        bigText: s(n.bigText),
        tickerText: s(n.tickerText),
        subText: s(n.subText),
        infoText: s(n.infoText),
        template: s(n.template),
      },
      isGroup: n.isGroup ?? false,
      userHandle: 0,
      // StatusBarNotification.groupKey() is the key itself for a notification with no group or sort key.
      groupKey: key,
      overrideGroupKey: null,
      key,
    };
  });
  return { code: RESULT_OK, data: androidJson({ statusBarNotifications: items }) };
}

/** JSON as Android's org.json JSONStringer writes it: `/` is escaped as `\/`, other non-ASCII is kept. */
export function androidJson(value: unknown): string {
  return JSON.stringify(value).replaceAll("/", "\\/");
}

/**
 * `am start-foreground-service|startservice … io.appium.settings/.LocationService --es latitude …`
 * (README:211-219) and `am stopservice io.appium.settings/.LocationService` (README:229-232);
 * null when the component is not the app's LocationService. Outputs as AOSP
 * ActivityManagerShellCommand runStartService / runStopService print them (stored public copy
 * index id 13374289): `Starting service: <intent>`; `Stopping service: <intent>` then on stderr
 * `Service stopped` or `Service not stopped: was not running.`, both with exit status 255.
 * LocationService.java stops itself without ACCESS_FINE_LOCATION; without the mock_location app op
 * LocationManager refuses the test provider and the service only logs it, so the location stays.
 * Missing or unparsable extras leave 0 (LocationBuilder.buildFromIntent).
 */
export function locationServiceCommand(
  phone: FakePhone,
  verb: "start" | "stop",
  intent: BroadcastIntent,
  intentText: string,
  io: CommandIo,
): number | null {
  if (!intent.component || !phone.packages.installed.has(PKG)) return null;
  const [pkg, cls] = classOf(intent.component);
  if (pkg !== PKG || cls !== `${PKG}.LocationService`) return null;
  const state = phone.appiumSettings;
  if (verb === "stop") {
    io.out(`Stopping service: ${intentText}\n`);
    io.err(state.locationService ? "Service stopped\n" : "Service not stopped: was not running.\n");
    state.locationService = false;
    return 255;
  }
  io.out(`Starting service: ${intentText}\n`);
  const installed = phone.packages.installed.get(PKG);
  if (!installed?.granted.has("android.permission.ACCESS_FINE_LOCATION")) return 0;
  // Starting a service starts the app process, and with it ForegroundService's receivers.
  phone.runtime(PKG);
  state.locationService = true;
  if (phone.packages.appop(PKG, "android:mock_location") !== "allow") return 0;
  const num = (k: string) => {
    const v = Number(intent.extras[k]);
    return intent.extras[k] !== undefined && Number.isFinite(v) ? v : null;
  };
  const old = state.location;
  state.location = {
    latitude: num("latitude") ?? old?.latitude ?? 0,
    longitude: num("longitude") ?? old?.longitude ?? 0,
    altitude: num("altitude") ?? 0,
  };
  return 0;
}

/**
 * `dumpsys activity services io.appium.settings`: the wrapper only looks for `isForeground=true`
 * (io.appium.settings build/lib/client.js isRunningInForeground). A ServiceRecord block per running
 * service, fewer lines than ActiveServices prints; `(nothing)` when none runs.
 */
export function dumpsysServices(phone: FakePhone, pkg: string | undefined, io: CommandIo): number {
  const running: string[] = [];
  if ((pkg === undefined || pkg === PKG) && settingsAppRunning(phone)) {
    running.push(".ForegroundService");
    if (phone.appiumSettings.locationService) running.push(".LocationService");
  }
  const hash = (s: string) => (Bun.hash.crc32(s) >>> 0).toString(16).padStart(8, "0").slice(0, 7);
  const blocks = running.map(
    (s) =>
      `  * ServiceRecord{${hash(s)} u0 ${PKG}/${s}}\n    intent={cmp=${PKG}/${s}}\n    packageName=${PKG}\n` +
      `    isForeground=true foregroundId=1\n`,
  );
  io.out(
    `ACTIVITY MANAGER SERVICES (dumpsys activity services)\n${running.length ? `  User 0 active services:\n${blocks.join("")}` : "  (nothing)\n"}`,
  );
  return 0;
}
