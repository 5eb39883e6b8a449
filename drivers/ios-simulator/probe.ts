/**
 * Whether AXe can drive this Simulator, checked at connect the way it will be used (research note
 * F1, F8): AXe found (PATH, then the usual install places, since GUI and agent hosts start the
 * daemon with PATH=/usr/bin:/bin:/usr/sbin:/sbin), `axe --version` a release at least
 * MIN_AXE_VERSION, the selected Xcode one that AXe release supports, and a real `describe-ui`
 * answering within a short ceiling. `--version` alone proves nothing: ArgumentParser answers it
 * without loading any simulator framework (getsentry/XcodeBuildMCP #453: doctor reported AXe
 * 1.7.1 as available while every tree read failed on Xcode 27).
 * Over 300 lines because each of its version and backend checks names its own fix.
 */
import { accessSync, constants, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { CallContext } from "../../src/driver/driver.ts";
import { DriverError } from "../../src/driver/driver-error.ts";
import type { AxePort } from "./axe-port.ts";
import { platformError } from "./tool-process.ts";
import { messageOf } from "../../src/protocol/errors.ts";

/**
 * AXe 1.7.0 added `--tap-style` (switches and toggles, AXe #46) and orientation-aware coordinates
 * (AXe #5); older releases are treated as unusable (research note F1 fix 4, §4 #11).
 */
export const MIN_AXE_VERSION = [1, 7, 0] as const;

/** Where Homebrew puts AXe on Apple Silicon and on Intel, and a user-local install. */
export const AXE_CANDIDATES: readonly string[] = [
  "/opt/homebrew/bin/axe",
  "/usr/local/bin/axe",
  join(homedir(), ".local/bin/axe"),
];

export const INSTALL_AXE = "install AXe (brew install cameroncooke/axe/axe), or set DEVICERAIL_AXE_PATH to it";
export const SELECT_XCODE = "sudo xcode-select -s /Applications/Xcode.app";
/** The ceiling of the connect-time `describe-ui`: a framework that cannot load fails at once. */
export const PROBE_TREE_MS = 2_000;

export type Version = [number, number, number];

export interface AxeLocation {
  path: string;
  /** How it was found: the configured path, the daemon's PATH, or one of the usual install places. */
  via: "DEVICERAIL_AXE_PATH" | "PATH" | "install place";
}

export interface LocateOptions {
  /** DEVICERAIL_AXE_PATH; when set, only it is tried. */
  axePath: string | null;
  /** The install places tried after PATH (default AXE_CANDIDATES). */
  axeCandidates?: readonly string[];
  /** The PATH searched first (default the daemon's). */
  pathEnv?: string;
}

const executable = (p: string) => {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** AXe's executable and how it was found, or null with every place looked in. */
export function locateAxe(opts: LocateOptions): { found: AxeLocation | null; tried: string[] } {
  if (opts.axePath)
    return {
      found: executable(opts.axePath) ? { path: opts.axePath, via: "DEVICERAIL_AXE_PATH" } : null,
      tried: [opts.axePath],
    };
  const pathEnv = opts.pathEnv ?? process.env.PATH ?? "";
  const onPath = Bun.which("axe", { PATH: pathEnv });
  if (onPath) return { found: { path: onPath, via: "PATH" }, tried: ["PATH"] };
  const candidates = opts.axeCandidates ?? AXE_CANDIDATES;
  const hit = candidates.find(executable);
  return {
    found: hit ? { path: hit, via: "install place" } : null,
    tried: [`PATH (${pathEnv || "empty"})`, ...candidates],
  };
}

/** `axe --version` of a release ("1.8.0"); dev builds print `git describe` output and parse as null. */
export function parseAxeVersion(out: string): Version | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:$|[\s+])/.exec(out.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

/** `xcodebuild -version`: "Xcode 26.1" then "Build version 17B55". */
export function parseXcodeVersion(out: string): { version: string; major: number; build: string | null } | null {
  const m = /^Xcode (\d+)((?:\.\d+)*)\s*$/m.exec(out);
  if (!m) return null;
  return {
    version: `${m[1]}${m[2] ?? ""}`,
    major: Number(m[1]),
    build: /^Build version (\S+)/m.exec(out)?.[1] ?? null,
  };
}

export const atLeast = (v: Version, min: readonly number[]) => {
  for (let i = 0; i < min.length; i++) if ((v[i] ?? 0) !== min[i]) return (v[i] ?? 0) > (min[i] as number);
  return true;
};
const text = (v: Version) => v.join(".");

/**
 * Why this AXe cannot drive this Xcode, with the AXe release to use, or null when they fit or the
 * pair is not documented either way (the describe-ui probe then decides):
 * - AXe 1.8 "supports Xcode 26 and Xcode 27" (cameroncooke/AXe README:30); on an older Xcode its
 *   setup fails with "Confirm Xcode 26 or later is selected" (AsyncParsableCommand+Setup.swift:32).
 * - AXe before 1.8 cannot load Xcode 27's relocated SimulatorKit (XcodeBuildMCP #446 and #453,
 *   AXe 1.7.1 on Xcode 27.0); 1.8.0 added Xcode 27 (AXe PR #60, CHANGELOG v1.8.0).
 */
export function axeXcodeProblem(axe: Version, xcodeMajor: number): string | null {
  if (atLeast(axe, [1, 8, 0]) && xcodeMajor < 26)
    return `AXe ${text(axe)} supports Xcode 26 and 27 only, and Xcode ${xcodeMajor} is selected; no AXe release from ${text([...MIN_AXE_VERSION] as Version)} on is documented for Xcode ${xcodeMajor}: select Xcode 26 or later (${SELECT_XCODE})`;
  if (!atLeast(axe, [1, 8, 0]) && xcodeMajor >= 27)
    return `AXe ${text(axe)} cannot load Xcode ${xcodeMajor}'s simulator frameworks; AXe 1.8.0 is the first release that supports Xcode 27 (it supports Xcode 26 and 27): upgrade AXe (brew upgrade axe), or select Xcode 26`;
  return null;
}

/**
 * AXe's own words when it cannot load the selected Xcode (xcode fakes quote them): a version
 * problem, not a device one.
 */
const XCODE_LOAD = /selected Xcode installation|Failed to load essential private frameworks|SimulatorKit/;

/** What the connect-time probe found: the backend's reason for not being AXe, and what it saw. */
export interface BackendProbe {
  /** Null when AXe passed every check. */
  reason: DriverError | null;
  axePath: string | null;
  axeVersion: string | null;
  xcodeVersion: string | null;
}

export interface ProbePorts {
  axe: AxePort;
  /** `xcrun xcodebuild -version`'s stdout; throws the typed error (ios_xcode_not_selected…). */
  xcodeVersion: (ctx: CallContext) => Promise<string>;
}

/** What the tool itself said: AXe's `Error: …` line is the error's detail. */
const said = (e: DriverError) => e.detail ?? e.message;

/** Only a cancel or a lost device ends the probe; every other failure is the reason AXe is not used. */
const fatal = (err: unknown, ctx: CallContext) =>
  !(err instanceof DriverError) ||
  err.driverCode === "driver_cancelled" ||
  ctx.signal.aborted ||
  err.platformCode === "ios_device_not_booted";

/** Runs the checks in order and stops at the first that fails. Sets `ports.axe.path` to the AXe found. */
export async function probeAxe(
  udid: string,
  ports: ProbePorts,
  locate: LocateOptions,
  ctx: CallContext,
): Promise<BackendProbe> {
  const seen: BackendProbe = { reason: null, axePath: null, axeVersion: null, xcodeVersion: null };
  const { found, tried } = locateAxe(locate);
  ctx.log.info({ axe: found?.path ?? null, via: found?.via ?? null, tried }, found ? "AXe found" : "AXe not found");
  if (!found)
    return {
      ...seen,
      reason: platformError(
        "ios_axe_not_found",
        false,
        `looked in ${tried.join(", ")}`,
        `AXe was not found (looked in ${tried.join(", ")}): ${INSTALL_AXE}`,
      ),
    };
  ports.axe.path = found.path;
  seen.axePath = found.path;

  let out: string;
  try {
    out = await ports.axe.version(ctx);
  } catch (err) {
    if (fatal(err, ctx) && !(err instanceof DriverError && err.platformCode === "ios_tool_not_found")) throw err;
    const why = said(err as DriverError).slice(0, 200);
    return {
      ...seen,
      reason: platformError("ios_axe_not_found", false, why, `${found.path} --version failed (${why}): ${INSTALL_AXE}`),
    };
  }
  const version = parseAxeVersion(out);
  if (!version)
    return {
      ...seen,
      reason: platformError(
        "ios_axe_version_unparsable",
        false,
        out.trim().slice(0, 200),
        `${found.path} --version printed "${out.trim().slice(0, 80)}", not a release version (a development build?): ${INSTALL_AXE}`,
      ),
    };
  seen.axeVersion = text(version);
  if (!atLeast(version, MIN_AXE_VERSION))
    return {
      ...seen,
      reason: platformError(
        "ios_axe_too_old",
        false,
        seen.axeVersion,
        `AXe ${seen.axeVersion} is older than ${text([...MIN_AXE_VERSION] as Version)}, the first release with --tap-style and orientation-aware taps: upgrade it (brew upgrade axe)`,
      ),
    };

  try {
    const xcode = parseXcodeVersion(await ports.xcodeVersion(ctx));
    if (xcode) {
      seen.xcodeVersion = xcode.version;
      const problem = axeXcodeProblem(version, xcode.major);
      if (problem)
        return {
          ...seen,
          reason: platformError(
            "ios_axe_xcode_unsupported",
            false,
            `AXe ${seen.axeVersion}, Xcode ${xcode.version}`,
            problem,
          ),
        };
    }
  } catch (err) {
    if (fatal(err, ctx)) throw err;
    if (err instanceof DriverError && err.platformCode === "ios_xcode_not_selected") return { ...seen, reason: err };
    // An unreadable Xcode version leaves the decision to the tree probe.
    ctx.log.warn({ err: messageOf(err) }, "xcodebuild -version failed");
  }

  try {
    await ports.axe.describeUi(udid, ctx, PROBE_TREE_MS);
  } catch (err) {
    if (fatal(err, ctx)) throw err;
    const e = err as DriverError;
    const message = said(e);
    // A slow tree is no broken AXe: describe-ui takes seconds on large screens (research F10).
    if (e.driverCode === "driver_timed_out") {
      ctx.log.warn(
        { udid, ceilingMs: PROBE_TREE_MS },
        "AXe describe-ui did not answer within the probe's ceiling; AXe is used",
      );
      return seen;
    }
    return { ...seen, reason: treeFailure(message, seen) };
  }
  return seen;
}

/**
 * Why a describe-ui that exited with an error rules AXe out: AXe's own words about loading the
 * selected Xcode (ios_axe_xcode_unsupported), or any other runtime error such as a wedged
 * CoreSimulatorBridge's "No translation object returned" (ios_axe_failed; XcodeBuildMCP #458,
 * where killing the bridge fixed it at once).
 */
export function treeFailure(
  message: string,
  seen: { axeVersion: string | null; xcodeVersion: string | null },
): DriverError {
  if (XCODE_LOAD.test(message))
    return platformError(
      "ios_axe_xcode_unsupported",
      false,
      message,
      `AXe ${seen.axeVersion ?? ""} cannot drive the selected Xcode${seen.xcodeVersion ? ` ${seen.xcodeVersion}` : ""} ("${message.slice(0, 200)}"): AXe 1.8 supports Xcode 26 and 27; select one of them (${SELECT_XCODE}) or upgrade AXe (brew upgrade axe)`,
    );
  return platformError(
    "ios_axe_failed",
    true,
    message,
    `AXe cannot read this simulator's UI ("${message.slice(0, 200)}"); if it persists, restart CoreSimulatorBridge (pgrep -f /usr/libexec/CoreSimulatorBridge | xargs kill -9) and reconnect`,
  );
}

/** `ios.*` metadata of every observation: which backend, why not AXe, what was found. */
export function probeMetadata(probe: BackendProbe | null) {
  return {
    backendReason: probe?.reason?.platformCode ?? null,
    axeVersion: probe?.axeVersion ?? null,
    xcodeVersion: probe?.xcodeVersion ?? null,
  };
}

/** The error input actions get on a device without an input backend: the probe's reason, or "install AXe". */
export function inputUnavailable(probe: BackendProbe | null): DriverError {
  const why = probe?.reason?.error.data.message;
  return platformError(
    "ios_input_unavailable",
    false,
    probe?.reason?.platformCode ?? "no input backend",
    why ? `this simulator has no input backend: ${why}` : `this simulator has no input backend: ${INSTALL_AXE}`,
  );
}

/** The Command Line Tools are selected instead of Xcode: xcrun finds no simctl, xcodebuild refuses. */
export const XCODE_NOT_SELECTED =
  /unable to find utility "(?:simctl|xcodebuild)", not a developer tool or in PATH|requires Xcode, but active developer directory '[^']*' is a command line tools instance/;

export const xcodeNotSelected = (detail: string) =>
  platformError(
    "ios_xcode_not_selected",
    false,
    detail.trim().slice(0, 300),
    `the Command Line Tools are selected instead of Xcode, so xcrun has no simctl: select Xcode (${SELECT_XCODE}), or install Xcode from the App Store and run it once`,
  );
