/**
 * Which daemon versions the CLI warns about (issue 26, newcomer points): a binary built from the
 * checkout whose daemon runs from source is the same devicerail; another package version, or
 * binaries of two commits, are not. The whole path (a real binary against a source daemon) is in
 * test/scripts/build.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { versionMismatch, versionsDiffer } from "../../src/cli/daemon-control.ts";
import type { HelloResult } from "../../src/protocol/types/handshake.ts";

const hello = (version: string) => ({ server: { name: "devicerail-daemon", version } }) as unknown as HelloResult;

describe("versionsDiffer", () => {
  test("same package version: a source run matches any binary, binaries match only their own commit", () => {
    expect(
      [
        ["0.1.0", "0.1.0"],
        ["0.1.0", "0.1.0+abc1234"],
        ["0.1.0+abc1234", "0.1.0"],
        ["0.1.0+abc1234", "0.1.0+abc1234"],
        ["0.1.0+unknown", "0.1.0+abc1234"],
        ["0.1.0+abc1234", "0.1.0+def5678"],
        ["0.1.0", "0.2.0"],
        ["0.1.0+abc1234", "0.2.0+abc1234"],
      ].map(([a, b]) => versionsDiffer(a as string, b as string)),
    ).toEqual([false, false, false, false, false, true, true, true]);
  });

  test("the warning names both versions and the fix, and is absent when they match", () => {
    expect(versionMismatch(hello("0.1.0"), "0.1.0+abc1234")).toBeNull();
    expect(versionMismatch(hello("0.1.0+def5678"), "0.1.0+abc1234")).toBe(
      "the running devicerail daemon is version 0.1.0+def5678, this command is 0.1.0+abc1234; restart it with `devicerail daemon stop`",
    );
  });
});
