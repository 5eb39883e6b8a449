import { describe, expect, test } from "bun:test";
import { AccessToken, tokenProblem } from "../../src/transports/token.ts";

const SECRET = "s3cret-token-0123456789";

describe("AccessToken", () => {
  test("matches only the exact token when candidates differ in content or length", () => {
    const t = new AccessToken(SECRET);
    expect([SECRET, `${SECRET}x`, SECRET.slice(0, -1), SECRET.toUpperCase(), ""].map((c) => t.matches(c))).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
  });

  test("reads a bearer Authorization header with any scheme case and refuses other schemes", () => {
    const t = new AccessToken(SECRET);
    expect(
      [
        null,
        `Bearer ${SECRET}`,
        `bearer ${SECRET}`,
        `Bearer  ${SECRET}`,
        `Bearer ${SECRET}x`,
        `Basic ${SECRET}`,
        SECRET,
        `Bearer ${SECRET} extra`,
      ].map((h) => t.matchesAuthorization(h)),
    ).toEqual(["missing", "ok", "ok", "ok", "wrong", "wrong", "wrong", "wrong"]);
  });

  test("refuses short, long and non-printable tokens without naming them when constructed or checked", () => {
    expect(tokenProblem(SECRET)).toBeNull();
    for (const bad of ["short", "x".repeat(513), "has a space in it!!", "tab\there-0123456789", "é".repeat(20)]) {
      const problem = tokenProblem(bad);
      expect(problem).not.toBeNull();
      expect(problem).not.toContain(bad);
      expect(() => new AccessToken(bad)).toThrow(problem as string);
    }
    expect(JSON.stringify({ token: new AccessToken(SECRET) })).toBe('{"token":"[token]"}');
  });
});
