import { describe, expect, test } from "bun:test";
import { signCredential, verifyCredential } from "../../src/farm/credential.ts";
import { tokenProblem } from "../../src/transports/token.ts";

const claims = {
  a: "0b7c4a52-8f5e-4d5f-9f3a-7d8e9f0a1b2c",
  h: "5e0f7c1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a",
  d: "android-adb:emulator-5554",
};

describe("allocation credentials", () => {
  test("a credential verifies with the key it was signed with, and passes as a token", () => {
    const credential = signCredential("key-1", claims);
    expect(credential).toMatch(/^drf1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(verifyCredential("key-1", credential)).toEqual(claims);
    expect(tokenProblem(credential)).toBeNull();
  });

  test("another key, an altered payload or signature, or something else entirely is refused", () => {
    const credential = signCredential("key-1", claims);
    const [prefix, payload, signature] = credential.split(".");
    const other = signCredential("key-1", { ...claims, d: "android-adb:other" }).split(".")[1];
    expect(
      [
        verifyCredential("key-2", credential),
        verifyCredential("key-1", `${prefix}.${other}.${signature}`),
        verifyCredential("key-1", `${prefix}.${payload}.${signature?.slice(0, -1)}A`),
        verifyCredential("key-1", `${credential}.extra`),
        verifyCredential("key-1", "farm-test-token-0123456789abcdef"),
        verifyCredential("key-1", "drf1."),
      ].every((r) => r === null),
    ).toBe(true);
  });
});
