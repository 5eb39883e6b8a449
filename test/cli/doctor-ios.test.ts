/**
 * `devicerail doctor` on iOS Simulators, against the fake xcrun and AXe (DEVICERAIL_XCRUN_PATH
 * makes the checks run off macOS): where AXe was found and its version, the selected Xcode, whether
 * that AXe supports it, a real describe-ui on each booted iPhone, and each problem's fix.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type FakeSimulators,
  type FakeSimulatorsOptions,
  startFakeSimulators,
} from "../support/ios-sim/fake-simulators.ts";
import { cli } from "./run.ts";

type Check = { name: string; status: string; detail: string; fix: string | null };
const IOS_NAMES = ["xcrun", "Xcode", "simctl", "AXe", "AXe and Xcode", "AXe on iPhone 17 Pro"];

async function doctor(sims: FakeSimulators, env: Record<string, string> = {}) {
  const r = await cli(["doctor", "--json"], {
    DEVICERAIL_IOS: "auto",
    DEVICERAIL_XCRUN_PATH: join(sims.binDir, "xcrun"),
    DEVICERAIL_AXE_PATH: join(sims.binDir, "axe"),
    ...env,
  });
  const checks = JSON.parse(r.stdout).checks as Check[];
  const by = (name: string) => checks.find((c) => c.name === name);
  return { code: r.code, checks, by, ios: checks.filter((c) => IOS_NAMES.includes(c.name)) };
}

async function fake(options: FakeSimulatorsOptions) {
  return startFakeSimulators(options);
}

describe("doctor's iOS checks", () => {
  test("a working setup: AXe's place and version, Xcode 26.5, the pairing and a describe-ui on the booted iPhone, all ok", async () => {
    await using sims = await fake({});
    const d = await doctor(sims);
    expect(d.ios).toEqual([
      { name: "xcrun", status: "ok", detail: join(sims.binDir, "xcrun"), fix: null },
      { name: "Xcode", status: "ok", detail: "Xcode 26.5 (17F42)", fix: null },
      { name: "simctl", status: "ok", detail: "booted: iPhone 17 Pro", fix: null },
      {
        name: "AXe",
        status: "ok",
        detail: `${join(sims.binDir, "axe")} (DEVICERAIL_AXE_PATH): version 1.8.0`,
        fix: null,
      },
      { name: "AXe and Xcode", status: "ok", detail: "AXe 1.8.0 with Xcode 26.5", fix: null },
      { name: "AXe on iPhone 17 Pro", status: "ok", detail: "describe-ui answers", fix: null },
    ]);
  }, 60_000);

  test("AXe 1.8.0 with Xcode 16.4: the pairing is a warning whose fix selects Xcode 26 or later", async () => {
    await using sims = await fake({ xcode: { version: "16.4", build: "16F6" } });
    const d = await doctor(sims);
    expect(d.by("AXe and Xcode")).toEqual({
      name: "AXe and Xcode",
      status: "warn",
      detail: "AXe 1.8.0 with Xcode 16.4: unsupported",
      fix: "AXe 1.8.0 supports Xcode 26 and 27 only, and Xcode 16 is selected; no AXe release from 1.7.0 on is documented for Xcode 16: select Xcode 26 or later (sudo xcode-select -s /Applications/Xcode.app)",
    });
  }, 60_000);

  test("AXe 1.7.1 with Xcode 27.0 names AXe 1.8.0; a wedged bridge shows in the describe-ui check with its fix", async () => {
    {
      await using sims = await fake({ axeVersion: "1.7.1", xcode: { version: "27.0", build: "27A5194q" } });
      expect((await doctor(sims)).by("AXe and Xcode")?.fix).toContain(
        "AXe 1.8.0 is the first release that supports Xcode 27",
      );
    }
    {
      await using sims = await fake({});
      sims.update(
        (s) => void ((s.devices.find((x) => x.state === "Booted") as { noTranslation: boolean }).noTranslation = true),
      );
      const c = (await doctor(sims)).by("AXe on iPhone 17 Pro");
      expect(c?.status).toBe("warn");
      expect(c?.detail).toBe(
        "describe-ui failed (ios_axe_failed): No translation object returned for simulator. This means you have likely specified a point onscreen that is invalid or invisible due to a fullscreen dialog",
      );
      expect(c?.fix).toContain("pgrep -f /usr/libexec/CoreSimulatorBridge | xargs kill -9");
    }
  }, 60_000);

  test("the Command Line Tools selected: Xcode and simctl say so with the xcode-select fix", async () => {
    await using sims = await fake({ xcode: "command-line-tools" });
    const d = await doctor(sims);
    const fix = "the Command Line Tools are selected instead of Xcode: sudo xcode-select -s /Applications/Xcode.app";
    expect(d.by("Xcode")).toEqual({
      name: "Xcode",
      status: "warn",
      detail:
        "xcode-select: error: tool 'xcodebuild' requires Xcode, but active developer directory '/Library/Developer/CommandLineTools' is a command line tools instance",
      fix,
    });
    expect(d.by("simctl")).toEqual({
      name: "simctl",
      status: "warn",
      detail: 'xcrun simctl: xcrun: error: unable to find utility "simctl", not a developer tool or in PATH',
      fix,
    });
  }, 60_000);

  test("AXe missing or too old: warnings with the install and upgrade commands; AXe on PATH says where it is", async () => {
    await using sims = await fake({ axeVersion: "1.6.0" });
    const old = await doctor(sims);
    expect(old.by("AXe")).toEqual({
      name: "AXe",
      status: "warn",
      detail: `${join(sims.binDir, "axe")} (DEVICERAIL_AXE_PATH): version 1.6.0, older than 1.7.0 (the first with --tap-style and orientation-aware taps)`,
      fix: "upgrade AXe: brew upgrade axe",
    });
    const gone = await doctor(sims, { DEVICERAIL_AXE_PATH: join(sims.stateDir, "no-axe") });
    expect(gone.by("AXe")).toEqual({
      name: "AXe",
      status: "warn",
      detail: `not found (looked in ${join(sims.stateDir, "no-axe")}): iOS Simulators are screenshot-only`,
      fix: "install AXe (brew install cameroncooke/axe/axe), or set DEVICERAIL_AXE_PATH to it",
    });
    // On PATH (the daemon's environment): found there.
    const home = join(sims.stateDir, "home");
    mkdirSync(join(home, "bin"), { recursive: true });
    writeFileSync(join(home, "bin", "axe"), readFileSync(join(sims.binDir, "axe")));
    chmodSync(join(home, "bin", "axe"), 0o755);
    const onPath = await cli(["doctor", "--json"], {
      DEVICERAIL_IOS: "auto",
      DEVICERAIL_XCRUN_PATH: join(sims.binDir, "xcrun"),
      PATH: `${join(home, "bin")}:${process.env.PATH}`,
    });
    expect(JSON.parse(onPath.stdout).checks.find((c: Check) => c.name === "AXe").detail).toStartWith(
      `${join(home, "bin", "axe")} (on PATH): version 1.6.0`,
    );
  }, 60_000);

  test("DEVICERAIL_IOS=off skips the iOS checks", async () => {
    await using sims = await fake({});
    const d = await doctor(sims, { DEVICERAIL_IOS: "off" });
    expect(d.by("iOS simulator tools")).toEqual({
      name: "iOS simulator tools",
      status: "skip",
      detail: "DEVICERAIL_IOS=off: iOS Simulators are not used",
      fix: null,
    });
  }, 60_000);
});
