import { describe, expect, test } from "bun:test";
import { TICKET_MS, VIEW_KEY_MS, ViewerPasses } from "../../src/transports/viewer-passes.ts";

const SESSION = "7d3c2b1a-0f9e-4d8c-b7a6-5e4f3d2c1b0a";
const OTHER = "00000000-0000-4000-8000-000000000000";
const url = (path: string) => new URL(`http://127.0.0.1:1${path}`);

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("ViewerPasses", () => {
  test("a ticket opens its Session's report page once, and nothing else, when it is redeemed", () => {
    const passes = new ViewerPasses();
    const { ticket } = passes.issueTicket(SESSION);
    expect(passes.admits("GET", url(`/sessions/${SESSION}/report?ticket=${ticket}`))).toBe(true);
    expect(passes.admits("POST", url(`/sessions/${SESSION}/report?ticket=${ticket}`))).toBe(false);
    expect(passes.admits("GET", url(`/sessions/${SESSION}/events?ticket=${ticket}`))).toBe(false);
    expect(passes.admits("GET", url(`/evidence/abc?ticket=${ticket}`))).toBe(false);
    expect(passes.redeem(ticket, OTHER)).toBe(false);
    expect(passes.redeem(ticket, SESSION.toUpperCase())).toBe(true);
    expect(passes.redeem(ticket, SESSION)).toBe(false);
  });

  test("a ticket is refused when it is older than a minute", () => {
    const c = clock();
    const passes = new ViewerPasses(c.now);
    const { ticket, expiresInMs } = passes.issueTicket(SESSION);
    expect(expiresInMs).toBe(TICKET_MS);
    c.advance(TICKET_MS);
    expect(passes.redeem(ticket, SESSION)).toBe(false);
  });

  test("a view key admits its Session's page and evidence reads, and no other route, until it expires", () => {
    const c = clock();
    const passes = new ViewerPasses(c.now);
    const key = passes.issueViewKey(SESSION);
    expect(passes.admits("GET", url(`/sessions/${SESSION}/report?view=${key}`))).toBe(true);
    expect(passes.admits("GET", url(`/evidence/sha256:ab12?view=${key}`))).toBe(true);
    expect(passes.admits("HEAD", url(`/evidence/ab12?view=${key}`))).toBe(true);
    expect(passes.admits("GET", url(`/sessions/${OTHER}/report?view=${key}`))).toBe(false);
    expect(passes.admits("GET", url(`/sessions/${SESSION}/export?view=${key}`))).toBe(false);
    expect(passes.admits("GET", url(`/devices?view=${key}`))).toBe(false);
    expect(passes.admits("GET", url(`/evidence/ab12?view=wrong`))).toBe(false);
    expect(passes.admits("DELETE", url(`/evidence/ab12?view=${key}`))).toBe(false);
    expect([passes.viewing(key, SESSION), passes.viewing(key, OTHER)]).toEqual([true, false]);
    c.advance(VIEW_KEY_MS);
    expect(passes.admits("GET", url(`/evidence/ab12?view=${key}`))).toBe(false);
    expect(passes.viewing(key, SESSION)).toBe(false);
  });

  test("the oldest passes are dropped when more than 1,024 are held", () => {
    const passes = new ViewerPasses();
    const first = passes.issueViewKey(SESSION);
    const second = passes.issueViewKey(SESSION);
    for (let i = 0; i < 1_023; i++) passes.issueViewKey(SESSION);
    expect([passes.viewing(first, SESSION), passes.viewing(second, SESSION)]).toEqual([false, true]);
  });
});
