/** The apps a fresh simulated phone ships with, as scenarios: a launcher and plain placeholder apps. */
import { type Scenario, screenRoot, type UiNode } from "./scenario.ts";

export interface AppInfo {
  package: string;
  /** Fully qualified launcher activity. */
  activity: string;
  label: string;
  /** False when the app declares no MAIN/LAUNCHER activity (default true). */
  launcher?: boolean;
  /** The data URI of the last VIEW intent it was started with (a browser shows it). */
  url?: string;
}

/** The home app's activity is declared HOME, not LAUNCHER: it has no icon of its own and cannot be launched by package. */
export const LAUNCHER: AppInfo = {
  package: "com.android.launcher3",
  activity: "com.android.launcher3.Launcher",
  label: "Launcher",
  launcher: false,
};
export const SETTINGS: AppInfo = {
  package: "com.android.settings",
  activity: "com.android.settings.Settings",
  label: "Settings",
};
export const BROWSER: AppInfo = {
  package: "com.android.chrome",
  activity: "com.google.android.apps.chrome.Main",
  label: "Chrome",
};

/** One clickable icon per app with a launcher activity, which opens it. */
export function launcherScenario(apps: () => readonly AppInfo[]): Scenario<Record<string, never>> {
  return {
    ...LAUNCHER,
    initial: "home",
    state: {},
    screens: {
      home: (_s, view) =>
        screenRoot(
          view,
          apps()
            .filter((a) => a.launcher !== false)
            .map(
              (a): UiNode => ({
                className: "android.widget.TextView",
                text: a.label,
                contentDesc: a.label,
                resourceId: "com.android.launcher3:id/icon",
                height: 200,
                onTap: (ctx) => ctx.launch(a.package),
              }),
            ),
          { padding: 60, gap: 40, top: 200 },
        ),
    },
  };
}

/** A placeholder screen: the app's label, and the URL it was opened with, if any. */
export function plainAppScenario(app: AppInfo): Scenario<Record<string, never>> {
  return {
    ...app,
    initial: "main",
    state: {},
    screens: {
      main: (_s, view) =>
        screenRoot(
          view,
          [
            { className: "android.widget.TextView", resourceId: `${app.package}:id/title`, text: app.label },
            {
              className: "android.widget.TextView",
              resourceId: `${app.package}:id/url`,
              text: app.url ?? "",
              visible: app.url !== undefined,
            },
          ],
          { padding: 60, gap: 20, top: 100 },
        ),
    },
  };
}
