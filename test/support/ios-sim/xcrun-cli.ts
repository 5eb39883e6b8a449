/**
 * The fake `xcrun` executable (started through the wrapper that startFakeSimulators writes):
 * `xcrun simctl …` against the shared state, plus the two xcrun options tools probe with.
 */
import { runCli } from "./fake-cli.ts";
import { SIMCTL } from "./simctl-commands.ts";
import { readState } from "./sim-state.ts";
import { fail, unhandled } from "./simctl-support.ts";
import { XCODEBUILD_NEEDS_XCODE, unableToFindUtility, xcodebuildVersion } from "./xcode.ts";

export const SIMCTL_PATH = "/Applications/Xcode.app/Contents/Developer/usr/bin/simctl";

await runCli("xcrun", async (ctx) => {
  const [first, ...rest] = ctx.argv;
  if (first === "--find" || first === "-f") {
    if (rest[0] !== "simctl") {
      ctx.err(`xcrun: error: unable to find utility "${rest[0] ?? ""}", not a developer tool or in PATH\n`);
      return 72;
    }
    ctx.out(`${SIMCTL_PATH}\n`);
    return 0;
  }
  if (first === "--version") {
    ctx.out("xcrun version 72.\n");
    return 0;
  }
  const xcode = readState(ctx.dir).xcode;
  // `xcrun xcodebuild -version` (xcode.ts): the version lines, or the shim's refusal under the Command Line Tools.
  if (first === "xcodebuild") {
    if (rest[0] !== "-version") unhandled(ctx, `xcodebuild ${rest.join(" ")}`);
    if (xcode === "command-line-tools") fail(ctx, XCODEBUILD_NEEDS_XCODE);
    ctx.out(xcodebuildVersion(xcode));
    return 0;
  }
  // Only Xcode has simctl: with the Command Line Tools selected xcrun cannot find it (exit 72).
  if (first === "simctl" && xcode === "command-line-tools") fail(ctx, unableToFindUtility("simctl"));
  if (first !== "simctl") {
    ctx.err(`xcrun: error: unable to find utility "${first ?? ""}", not a developer tool or in PATH\n`);
    return 72;
  }
  // One device set only: `--set <path>` is accepted and recorded in the log, not honoured.
  const args = rest[0] === "--set" ? rest.slice(2) : rest;
  const [sub, ...subArgs] = args;
  const handler = sub ? SIMCTL[sub] : undefined;
  if (!handler) unhandled(ctx, `simctl ${args.join(" ")}`);
  return handler(ctx, subArgs);
});
