/**
 * The session report in a real browser (Debian's headless Chromium): the file `devicerail report`
 * writes, opened with the network blocked, and the page the daemon serves live at
 * /sessions/{id}/report, following an active Session over the event plane. The Sessions are
 * recorded on the Mock device over JSON-RPC; the DOM contract is the report page's spec.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { cli, tempCwd } from "../cli/run.ts";
import { canaryForms, leaksIn } from "../support/canary.ts";
import {
  type PageProblems,
  browserForFile,
  decodeScreenshot,
  describeWithChromium,
  undecodedImages,
  watchPage,
} from "../support/chromium.ts";
import type { RpcResponse } from "../support/daemon.ts";
import { helloParams } from "../support/hello.ts";
import { TcpClient } from "../support/tcp-client.ts";
import { ServeDaemon, within } from "./serve-daemon.ts";

// page.evaluate callbacks run in the browser; the project's TypeScript setup has no DOM types.
declare const document: any;
declare const window: any;
declare const location: any;
declare const MutationObserver: any;

const VIEWPORT = { width: 1280, height: 800 };
const SCREEN = { width: 1280, height: 720 };
/** The secret typed with inputSecret: it must appear nowhere in the report. */
const CANARY = "c4n4ry-7f3a9e-s3cret-report";
/** An empty spot of the sign-in screen, off-centre so a swapped or mis-scaled marker shows. */
const FREE_TAP = { x: 1040, y: 600 };
const USERNAME = { x: 640, y: 148 };
const PASSWORD = { x: 640, y: 220 };
const SIGN_IN = { x: 640, y: 292 };
const NOPE_ERROR = "element_not_found: element was not found";

const selector = (identifier: string) => ({
  kind: "selector",
  selector: { context: null, role: null, name: null, value: null, identifier, text: null, css: null },
});

async function must(c: TcpClient, method: string, params?: unknown): Promise<any> {
  const r = await within(c.call(method, params), 15_000, `no answer to ${method}`);
  if (!r.result) throw new Error(`${method} failed: ${JSON.stringify(r.error)}`);
  return r.result;
}

const execute = (c: TcpClient, name: string, args: unknown): Promise<RpcResponse> =>
  within(c.call("device.execute", { id: crypto.randomUUID(), name, arguments: args }), 15_000, `no answer to ${name}`);

/** An action that must succeed: its ActionResult. */
async function act(c: TcpClient, name: string, args: unknown): Promise<any> {
  const r = await execute(c, name, args);
  if (!r.result) throw new Error(`${name} ${JSON.stringify(args)} failed: ${JSON.stringify(r.error)}`);
  return r.result;
}

/** A connection with the Mock selected and a Session started on it. */
async function startSession(port: number): Promise<{ client: TcpClient; sessionId: string }> {
  const client = await TcpClient.connect(port);
  await must(client, "system.hello", helloParams());
  await must(client, "device.connect");
  const { id } = await must(client, "session.start");
  return { client, sessionId: id };
}

/** The Session the exported file shows: sign in on the Mock, one failed element tap, a protected input, a verdict. */
async function recordSignIn(port: number): Promise<string> {
  const { client: c, sessionId } = await startSession(port);
  await must(c, "device.observe");
  await act(c, "tap", FREE_TAP);
  await act(c, "tap", USERNAME);
  await act(c, "inputText", { text: "alice" });
  expect((await execute(c, "tapElement", { target: selector("nope") })).error?.data.code).toBe("element_not_found");
  await act(c, "tap", PASSWORD);
  await act(c, "inputSecret", { secret: CANARY });
  await must(c, "device.observe");
  await act(c, "tap", SIGN_IN);
  await must(c, "verdict.record", { verdict: { status: "pass", summary: "signed in as alice" } });
  await must(c, "session.end");
  c.close();
  return sessionId;
}

/** The model a page embeds (the JSON in #report-data), read from its HTML text. */
function embeddedModel(html: string): any {
  const json = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)?.[1];
  if (!json) throw new Error(`no #report-data in the page: ${html.slice(0, 300)}`);
  return JSON.parse(json);
}

interface ExpectedStep {
  seq: number;
  kind: string;
  status: string;
  /** The event that opened the step, and the completion of an action. */
  event: any;
  completion: any | null;
}

const KIND: Record<string, string> = {
  sessionStarted: "session",
  sessionEnded: "session",
  observationCaptured: "observation",
  actionStarted: "action",
  verdictRecorded: "verdict",
  error: "error",
  mediaStreamStarted: "media",
  mediaFrameCaptured: "media",
  mediaStreamEnded: "media",
};
const STATUS: Record<string, string> = {
  succeeded: "ok",
  failed: "failed",
  cancelled: "cancelled",
  timedOut: "timedOut",
};

/** The spec's steps of a model: every event but an action's completion, which joins its start. */
function expectedSteps(model: any): ExpectedStep[] {
  const completions = new Map<string, any>();
  for (const e of model.events) if (e.payload.type === "actionCompleted") completions.set(e.payload.callId, e);
  return model.events
    .filter((e: any) => e.payload.type !== "actionCompleted")
    .map((e: any) => {
      const completion = e.payload.type === "actionStarted" ? (completions.get(e.payload.call.id) ?? null) : null;
      const status = completion ? STATUS[completion.payload.outcome.outcome] : "ok";
      return { seq: e.sequence, kind: KIND[e.payload.type] ?? "?", status, event: e, completion };
    });
}

/** The action step of the call named `name` whose arguments match `args`. */
function actionStep(steps: ExpectedStep[], name: string, args?: Record<string, unknown>): ExpectedStep {
  const found = steps.find(
    (s) =>
      s.kind === "action" &&
      s.event.payload.call.name === name &&
      (!args || Object.entries(args).every(([k, v]) => s.event.payload.call.arguments?.[k] === v)),
  );
  if (!found) throw new Error(`no ${name} step with ${JSON.stringify(args)}`);
  return found;
}

/** The steps as the page shows them, in document order. */
const renderedSteps = (page: Page) =>
  page.$$eval("ol#timeline > li.step", (els: any[]) =>
    els.map((e) => ({
      id: e.id,
      seq: Number(e.dataset.seq),
      kind: e.dataset.kind,
      status: e.dataset.status,
      tabindex: e.getAttribute("tabindex"),
      hidden: e.hasAttribute("hidden"),
    })),
  );

const visibleSeqs = async (page: Page) => (await renderedSteps(page)).filter((s) => !s.hidden).map((s) => s.seq);

const selectedSteps = (page: Page) =>
  page.$$eval("ol#timeline > li.step.selected", (els: any[]) =>
    els.map((e) => ({ seq: Number(e.dataset.seq), current: e.getAttribute("aria-current") })),
  );

/**
 * Waits until exactly step `seq` is selected (class and aria-current) and, unless `hash` is false
 * (a page that selected its first step by itself need not name it), the location's hash names it.
 */
async function expectSelected(page: Page, seq: number, hash = true): Promise<void> {
  await page
    .waitForFunction(
      (n: number) => {
        const sel = document.querySelectorAll("ol#timeline > li.step.selected");
        return sel.length === 1 && Number(sel[0].dataset.seq) === n;
      },
      seq,
      { timeout: 3_000 },
    )
    .catch(() => {});
  const shown = { selected: await selectedSteps(page), hash: hash ? await page.evaluate(() => location.hash) : null };
  expect(shown).toEqual({ selected: [{ seq, current: "true" }], hash: hash ? `#seq-${seq}` : null });
}

const noProblems = (p: PageProblems) => expect(p).toEqual({ consoleErrors: [], pageErrors: [], failedRequests: [] });

/** The lines of a list in #detail, as text with whitespace collapsed; `visibleOnly` leaves out hidden ones. */
const lines = (page: Page, css: string, visibleOnly = false) =>
  page.$$eval(
    `#detail ${css}`,
    (els: any[], only: boolean) =>
      els.filter((e) => !only || !e.hasAttribute("hidden")).map((e) => e.textContent.replace(/\s+/g, " ").trim()),
    visibleOnly,
  );

describeWithChromium("session report in Chromium", () => {
  const browser = browserForFile();
  let daemon: ServeDaemon;
  let sessionId: string;
  let file: string;
  let html: string;
  let model: any;
  let steps: ExpectedStep[];
  /** Screenshots for a person to look at: kept after the run (the temporary data directories are not), replaced by the next. */
  const shotsDir = join(tmpdir(), "devicerail-report-screenshots");

  beforeAll(async () => {
    rmSync(shotsDir, { recursive: true, force: true });
    mkdirSync(shotsDir, { recursive: true });
    daemon = await ServeDaemon.start(["--listen", "127.0.0.1:0"]);
    sessionId = await recordSignIn(daemon.port);
    file = join(tempCwd(), "report.html");
    const r = await cli(["report", sessionId, "-o", file], { DEVICERAIL_DATA_DIR: daemon.dataDir });
    if (r.code !== 0) throw new Error(`devicerail report exited ${r.code}: ${r.stderr}`);
    html = readFileSync(file, "utf8");
    model = embeddedModel(html);
    steps = expectedSteps(model);
    copyFileSync(file, join(shotsDir, "report.html"));
  }, 60_000);

  afterAll(async () => {
    await daemon?.[Symbol.asyncDispose]();
  });

  /** A fresh context; its waits fail well within a test's time, which would otherwise kill the browser. */
  async function newContext(): Promise<BrowserContext> {
    const context = await browser().newContext({ viewport: VIEWPORT });
    context.setDefaultTimeout(5_000);
    return context;
  }

  /** The exported file in a fresh context where every request but the file's own is aborted. */
  async function openFile(hash = ""): Promise<{ page: Page; problems: PageProblems } & AsyncDisposable> {
    const context = await newContext();
    await context.route("**/*", (r) => (r.request().url().startsWith("file:") ? r.continue() : r.abort()));
    const page = await context.newPage();
    const problems = watchPage(page);
    await page.goto(`${pathToFileURL(file).href}${hash}`);
    await page.locator("ol#timeline > li.step").first().waitFor({ timeout: 5_000 });
    return { page, problems, [Symbol.asyncDispose]: () => context.close() };
  }

  const stepById = (page: Page, seq: number) => page.locator(`ol#timeline > li.step#seq-${seq}`);

  test("the exported file opens offline with every step, picture and header field and no errors", async () => {
    await using r = await openFile();
    const { page, problems } = r;
    expect(await renderedSteps(page)).toEqual(
      steps.map((s) => ({
        id: `seq-${s.seq}`,
        seq: s.seq,
        kind: s.kind,
        status: s.status,
        tabindex: "-1",
        hidden: false,
      })),
    );
    const count = (type: string) => model.events.filter((e: any) => e.payload.type === type).length;
    expect({
      actions: await page.locator("li.step[data-kind=action]").count(),
      observations: await page.locator("li.step[data-kind=observation]").count(),
    }).toEqual({
      actions: model.summary.actions,
      observations: count("observationCaptured"),
    });
    expect([model.summary.actions, count("observationCaptured")]).toEqual([7, 2]);

    // Taps carry before and after thumbnails, observations their screen.
    for (const s of steps.filter(
      (s) => (s.kind === "action" && s.event.payload.call.name === "tap") || s.kind === "observation",
    )) {
      const roles = await stepById(page, s.seq)
        .locator("img.thumb")
        .evaluateAll((els: any[]) => els.map((e) => e.dataset.role));
      expect({ seq: s.seq, roles }).toEqual({
        seq: s.seq,
        roles: s.kind === "observation" ? ["screen"] : ["before", "after"],
      });
    }
    expect(await undecodedImages(page)).toEqual([]);

    const field = (name: string) => page.locator(`#summary [data-field=${name}]`).innerText();
    const header = Object.fromEntries(
      await Promise.all(
        ["device", "platform", "os", "app", "host", "version", "outcome", "verdicts"].map(async (f) => [
          f,
          await field(f),
        ]),
      ),
    );
    expect([header.platform, header.os, header.app].map((t) => t.trim())).toEqual([
      "mock",
      "0.1",
      "com.devicerail.mock",
    ]);
    expect(header.device).toContain(model.device.name);
    expect(header.device).toContain(model.device.id);
    expect([model.device.name, model.device.id]).toEqual(["DeviceRail Mock Device", "mock-1"]);
    expect(header.host).toContain(hostname());
    expect(header.version).toContain(model.daemonVersion);
    expect(header.outcome).toContain("completed");
    expect(header.verdicts).toContain("pass: signed in as alice");
    noProblems(problems);
  }, 30_000);

  test("a protected action shows only the redaction note and its secret is nowhere in the file or the page", async () => {
    await using r = await openFile();
    const { page, problems } = r;
    const secret = actionStep(steps, "inputSecret");
    expect(secret.event.payload.call).toEqual({
      id: expect.any(String),
      name: "inputSecret",
      arguments: null,
      argumentsRedacted: true,
    });
    expect(await stepById(page, secret.seq).locator(".redacted").innerText()).toBe(
      "arguments redacted (protected action)",
    );
    await stepById(page, secret.seq).click();
    await expectSelected(page, secret.seq);
    expect(await page.locator("#detail").innerText()).toContain("arguments redacted (protected action)");
    const forms = canaryForms(CANARY);
    expect([...leaksIn(forms, "report file", html), ...leaksIn(forms, "page.content()", await page.content())]).toEqual(
      [],
    );
    noProblems(problems);
  }, 30_000);

  test("each step shows its title, its time since the start and an action's duration", async () => {
    await using r = await openFile();
    const { page } = r;
    const shown = await page.$$eval("ol#timeline > li.step", (els: any[]) =>
      els.map((e) => ({
        title: e.querySelector(".step-title")?.textContent.trim() ?? null,
        time: e.querySelector(".step-time")?.textContent.trim() ?? null,
        duration: e.querySelector(".step-duration")?.textContent.trim() ?? null,
      })),
    );
    const started = model.events[0].atMs;
    const clock = (ms: number) =>
      `+${Math.floor(ms / 60_000)}:${String(Math.floor(ms / 1000) % 60).padStart(2, "0")}.${String(ms % 1000).padStart(3, "0")}`;
    const expected = steps.map((s) => {
      const p = s.event.payload;
      const title =
        s.kind === "action"
          ? p.call.name
          : s.kind === "observation"
            ? "observation"
            : s.kind === "verdict"
              ? `verdict ${p.verdict.status}`
              : p.type === "sessionStarted"
                ? "session started"
                : "session ended";
      let duration: string | null = null;
      if (s.completion) {
        const o = s.completion.payload.outcome;
        duration = `${o.outcome === "succeeded" ? o.result.finishedAtMs - o.result.startedAtMs : s.completion.atMs - s.event.atMs} ms`;
      }
      return { title, time: clock(s.event.atMs - started), duration };
    });
    expect(shown).toEqual(expected);
  }, 30_000);

  test("a tap's marker is drawn at the recorded point of its before screenshot only", async () => {
    await using r = await openFile();
    const { page, problems } = r;
    for (const point of [FREE_TAP, USERNAME]) {
      const step = actionStep(steps, "tap", point);
      await stepById(page, step.seq).click();
      await expectSelected(page, step.seq);
      const figures = await page.$$eval("#detail figure.shot", (els: any[]) =>
        els.map((f) => ({
          role: f.dataset.role,
          caption: f.querySelector("figcaption")?.textContent.trim() ?? null,
          img: !!f.querySelector(".shot-frame > img.shot-img"),
          viewBox: f.querySelector(".shot-frame svg.markers")?.getAttribute("viewBox") ?? null,
          taps: [...f.querySelectorAll("svg.markers circle.marker-tap")].map((c: any) => ({
            cx: Number(c.getAttribute("cx")),
            cy: Number(c.getAttribute("cy")),
            r: Number(c.getAttribute("r")),
          })),
        })),
      );
      expect(figures.map((f) => [f.role, f.caption, f.img])).toEqual([
        ["before", "before", true],
        ["after", "after", true],
      ]);
      const before = figures[0] as (typeof figures)[number];
      expect(before.viewBox).toBe(`0 0 ${SCREEN.width} ${SCREEN.height}`);
      expect(before.taps.map((t) => [t.cx, t.cy])).toEqual([[point.x, point.y]]);
      const radius = before.taps[0]?.r ?? 0;
      expect(radius).toBeGreaterThanOrEqual(0.02 * SCREEN.height);
      expect(radius).toBeLessThanOrEqual(0.04 * SCREEN.height);
      expect(figures[1]?.taps).toEqual([]);

      // The pixels: the red ring's centre is where the tap landed on the picture as displayed.
      const frame = page.locator("#detail figure.shot[data-role=before] .shot-frame");
      const [frameBox, imgBox] = [await frame.boundingBox(), await frame.locator("img.shot-img").boundingBox()];
      if (!frameBox || !imgBox) throw new Error("the before frame is not displayed");
      const pixels = decodeScreenshot(await frame.screenshot());
      const want = {
        x: imgBox.x - frameBox.x + (point.x / SCREEN.width) * imgBox.width,
        y: imgBox.y - frameBox.y + (point.y / SCREEN.height) * imgBox.height,
      };
      const ringRadius = (radius / SCREEN.width) * imgBox.width;
      let [n, sx, sy, far] = [0, 0, 0, 0];
      for (let y = 0; y < pixels.height; y++)
        for (let x = 0; x < pixels.width; x++) {
          const [red, green, blue] = pixels.at(x, y);
          if (red <= 180 || green >= 90 || blue >= 120) continue;
          if (Math.hypot(x + 0.5 - want.x, y + 0.5 - want.y) > ringRadius * 2 + 4) far++;
          else [n, sx, sy] = [n + 1, sx + x + 0.5, sy + y + 0.5];
        }
      const found = {
        near: n > 20,
        far,
        dx: Math.round(Math.abs(sx / n - want.x)),
        dy: Math.round(Math.abs(sy / n - want.y)),
      };
      console.log(
        `tap ${point.x},${point.y}: ${n} red-ish pixels around (${want.x.toFixed(1)}, ${want.y.toFixed(1)}) of a ${pixels.width}x${pixels.height} frame, centroid off by ${found.dx},${found.dy} px, ${far} elsewhere`,
      );
      expect({ ...found, dx: found.dx <= 3, dy: found.dy <= 3 }).toEqual({ near: true, far: 0, dx: true, dy: true });
    }
    noProblems(problems);
  }, 30_000);

  test("clicking a screenshot opens the viewer with the markers, and Escape closes it", async () => {
    await using r = await openFile();
    const { page, problems } = r;
    const step = actionStep(steps, "tap", FREE_TAP);
    await stepById(page, step.seq).click();
    await page.locator("#detail figure.shot[data-role=before] img.shot-img").click();
    await page.locator("dialog#viewer[open]").waitFor({ timeout: 3_000 });
    const before = step.completion.payload.outcome.result.before.screenshot.sha256;
    expect(await page.locator("dialog#viewer img#viewer-img").getAttribute("src")).toBe(model.images[before].src);
    expect(
      await page
        .locator("dialog#viewer circle.marker-tap")
        .evaluateAll((els: any[]) => els.map((c) => [Number(c.getAttribute("cx")), Number(c.getAttribute("cy"))])),
    ).toEqual([[FREE_TAP.x, FREE_TAP.y]]);
    await page.keyboard.press("Escape");
    await page.locator("dialog#viewer").waitFor({ state: "hidden", timeout: 3_000 });
    expect(await page.locator("dialog#viewer").evaluate((d: any) => d.open)).toBe(false);
    noProblems(problems);
  }, 30_000);

  test("the step that signs in shows the screen change as a tree diff, and the tree search filters its lines", async () => {
    await using r = await openFile();
    const { page, problems } = r;
    const signIn = actionStep(steps, "tap", SIGN_IN);
    await stepById(page, signIn.seq).click();
    await expectSelected(page, signIn.seq);
    const added = await lines(page, "section.diff ul.diff-lines > li.diff-added");
    const removed = await lines(page, "section.diff ul.diff-lines > li.diff-removed");
    expect({
      addedWelcome: added.some((l) => l.includes("Welcome")),
      removedUsername: removed.some((l) => l.includes("username") || l.includes("User name")),
    }).toEqual({
      addedWelcome: true,
      removedUsername: true,
    });

    const search = page.locator("#detail section.tree input.tree-search");
    expect(await search.getAttribute("type")).toBe("search");
    const all = await lines(page, "section.tree ol.tree-lines > li");
    expect(all.length).toBeGreaterThan(3);
    const count = () => page.locator("#detail section.tree .tree-count").innerText();
    expect((await count()).trim()).toBe(`${all.length} of ${all.length}`);
    for (const term of ["sign", "WELCOME", "no such line"]) {
      await search.fill(term);
      const shown = await lines(page, "section.tree ol.tree-lines > li", true);
      expect(shown).toEqual(all.filter((l) => l.toLowerCase().includes(term.toLowerCase())));
      expect((await count()).trim()).toBe(`${shown.length} of ${all.length}`);
    }
    expect((await lines(page, "section.tree ol.tree-lines > li", true)).length).toBe(0);
    await search.fill("");
    expect(await lines(page, "section.tree ol.tree-lines > li", true)).toEqual(all);
    noProblems(problems);
  }, 30_000);

  test("every step whose observation recorded a UI tree shows that tree", async () => {
    await using r = await openFile();
    const { page, problems } = r;
    const withTree = steps.filter((s) => {
      const obs =
        s.kind === "observation"
          ? [s.event.payload.observation]
          : s.completion?.payload.outcome.result
            ? [s.completion.payload.outcome.result.after, s.completion.payload.outcome.result.before]
            : [];
      return obs.some((o: any) => o?.uiSnapshot);
    });
    expect(withTree.length).toBe(7);
    const shown: { seq: number; lines: number; text: string }[] = [];
    for (const s of withTree) {
      await stepById(page, s.seq).click();
      await expectSelected(page, s.seq);
      const tree = page.locator("#detail section.tree");
      shown.push({
        seq: s.seq,
        lines: await tree.locator("ol.tree-lines > li").count(),
        text: (await tree.innerText()).replace(/\s+/g, " ").slice(0, 80),
      });
    }
    expect(shown.filter((s) => s.lines === 0)).toEqual([]);
    noProblems(problems);
  }, 30_000);

  test("tree and diff lines are written in the spec's format", async () => {
    await using r = await openFile();
    const { page } = r;
    await stepById(page, actionStep(steps, "tap", SIGN_IN).seq).click();
    const home = [
      'Text "Welcome, alice" id=title at=640,72 size=480x64',
      'Text "Not synced" id=status at=640,140 size=480x40',
      'Button "Sync" id=sync at=640,204 size=480x56',
      'List "Menu" id=menu at=640,316 size=480x136',
      'ListItem "Settings" id=settings at=640,284 size=464x56',
      'ListItem "About" id=about at=640,348 size=464x56',
      'Button "Sign out" id=sign_out at=640,428 size=480x56',
    ];
    const bullets = "•".repeat(CANARY.length);
    const login = [
      'Text "Sign in" id=title at=640,72 size=480x64',
      'TextField "alice" id=username at=640,148 size=480x56',
      `SecureTextField "${bullets}" id=password at=640,220 size=480x56`,
      'Button "Sign in" id=sign_in at=640,292 size=480x56',
    ];
    expect({
      tree: await lines(page, "section.tree ol.tree-lines > li"),
      added: await lines(page, "section.diff li.diff-added"),
      removed: await lines(page, "section.diff li.diff-removed"),
      changed: await lines(page, "section.diff li.diff-changed"),
    }).toEqual({ tree: home, added: home.map((l) => `+ ${l}`), removed: login.map((l) => `- ${l}`), changed: [] });
    // The first screen's tree has nothing before it; a disabled control is marked.
    const first = steps.find((s) => s.kind === "observation") as ExpectedStep;
    await stepById(page, first.seq).click();
    expect({
      diff: (await page.locator("#detail section.diff").innerText()).includes("first tree"),
      lines: await lines(page, "section.diff li:is(.diff-added, .diff-removed, .diff-changed)"),
    }).toEqual({ diff: true, lines: [] });
    expect(await lines(page, "section.tree ol.tree-lines > li")).toContain(
      'Button "Sign in" id=sign_in [disabled] at=640,292 size=480x56',
    );
  }, 30_000);

  test("the errors filter shows exactly the failed step and the actions filter hides the rest", async () => {
    await using r = await openFile();
    const { page, problems } = r;
    const pressed = () =>
      page.$$eval("button[data-filter]", (els: any[]) =>
        Object.fromEntries(els.map((b) => [b.dataset.filter, b.getAttribute("aria-pressed")])),
      );
    expect(await pressed()).toEqual({ all: "true", actions: "false", errors: "false" });
    const failed = actionStep(steps, "tapElement");
    expect(failed.status).toBe("failed");

    await page.locator("button[data-filter=errors]").click();
    expect(await pressed()).toEqual({ all: "false", actions: "false", errors: "true" });
    expect(await visibleSeqs(page)).toEqual([failed.seq]);
    expect(await stepById(page, failed.seq).locator(".step-error").innerText()).toBe(NOPE_ERROR);

    await page.locator("button[data-filter=actions]").click();
    expect(await pressed()).toEqual({ all: "false", actions: "true", errors: "false" });
    expect(await visibleSeqs(page)).toEqual(steps.filter((s) => s.kind === "action").map((s) => s.seq));
    expect(await page.locator("li.step[data-kind=observation]:not([hidden])").count()).toBe(0);

    await page.locator("button[data-filter=all]").click();
    expect(await pressed()).toEqual({ all: "true", actions: "false", errors: "false" });
    expect(await visibleSeqs(page)).toEqual(steps.map((s) => s.seq));
    await stepById(page, failed.seq).click();
    expect(await page.locator("#detail .detail-error").innerText()).toContain(NOPE_ERROR);
    noProblems(problems);
  }, 30_000);

  test("j, k and the arrow keys move the selection over visible steps and update the hash", async () => {
    await using r = await openFile();
    const { page, problems } = r;
    const seqs = steps.map((s) => s.seq);
    const at = (i: number) => seqs.at(i) as number;
    // Without a hash the first step is selected.
    await expectSelected(page, at(0), false);
    for (const [key, index] of [
      ["j", 1],
      ["ArrowDown", 2],
      ["j", 3],
      ["k", 2],
      ["ArrowUp", 1],
      ["End", -1],
      ["k", -2],
      ["Home", 0],
    ] as const) {
      await page.keyboard.press(key);
      await expectSelected(page, at(index));
    }
    // The last step stays selected at the end, and the selected step is scrolled into view.
    await page.keyboard.press("End");
    await page.keyboard.press("j");
    await expectSelected(page, at(-1));
    expect(
      await stepById(page, at(-1)).evaluate((e: any) => {
        const b = e.getBoundingClientRect();
        return b.top >= 0 && b.bottom <= window.innerHeight;
      }),
    ).toBe(true);

    // With the actions filter, j skips the observations.
    await page.locator("button[data-filter=actions]").click();
    const actions = steps.filter((s) => s.kind === "action").map((s) => s.seq);
    await stepById(page, actions[0] as number).click();
    for (const next of actions.slice(1, 5)) {
      await page.keyboard.press("j");
      await expectSelected(page, next);
    }
    // Keys typed into the tree search stay there.
    const current = actionStep(steps, "tap", SIGN_IN).seq;
    await stepById(page, current).click();
    await page.locator("#detail input.tree-search").focus();
    await page.keyboard.press("j");
    await page.keyboard.press("k");
    expect(await page.locator("#detail input.tree-search").inputValue()).toBe("jk");
    await expectSelected(page, current);
    noProblems(problems);
  }, 30_000);

  test("a #seq-N link selects that step, or the nearest one before it", async () => {
    const verdict = steps.find((s) => s.kind === "verdict") as ExpectedStep;
    {
      await using r = await openFile(`#seq-${verdict.seq}`);
      await expectSelected(r.page, verdict.seq);
      expect(
        await stepById(r.page, verdict.seq).evaluate((e: any) => {
          const b = e.getBoundingClientRect();
          return b.top >= 0 && b.bottom <= window.innerHeight;
        }),
      ).toBe(true);
      noProblems(r.problems);
    }
    // An action's completion is no step of its own: its link goes to the action.
    const signIn = actionStep(steps, "tap", SIGN_IN);
    {
      await using r = await openFile(`#seq-${signIn.completion.sequence}`);
      expect(await selectedSteps(r.page)).toEqual([{ seq: signIn.seq, current: "true" }]);
      noProblems(r.problems);
    }
  }, 30_000);

  test("screenshots of the exported report for a person to look at", async () => {
    await using r = await openFile();
    const { page } = r;
    const paths: string[] = [];
    const shoot = async (name: string) => {
      const path = join(shotsDir, name);
      await page.screenshot({ path });
      paths.push(path);
    };
    await shoot("file-first-step.png");
    await stepById(page, actionStep(steps, "tap", FREE_TAP).seq).click();
    await shoot("file-tap-marker.png");
    await stepById(page, actionStep(steps, "tap", SIGN_IN).seq).click();
    await shoot("file-sign-in-diff.png");
    await page.locator("button[data-filter=errors]").click();
    await stepById(page, actionStep(steps, "tapElement").seq).click();
    await shoot("file-errors-filter.png");
    await page.locator("button[data-filter=all]").click();
    await stepById(page, actionStep(steps, "tap", FREE_TAP).seq).click();
    await page.locator("#detail figure.shot[data-role=before] img.shot-img").click();
    await shoot("file-viewer-dialog.png");
    console.log(
      `report screenshots:\n  ${paths.join("\n  ")}\n  (the report itself: ${join(shotsDir, "report.html")})`,
    );
  }, 30_000);

  test("the live viewer shows a new action within a second and reports the end of the Session", async () => {
    const { client: c, sessionId: live } = await startSession(daemon.port);
    const context = await newContext();
    try {
      await must(c, "device.observe");
      await act(c, "tap", USERNAME);
      const page = await context.newPage();
      const problems = watchPage(page);
      const url = `http://127.0.0.1:${daemon.port}/sessions/${live}/report`;
      const response = await page.goto(url);
      expect(response?.status()).toBe(200);
      await page.waitForFunction(() => document.querySelector("#live-status")?.textContent.trim() === "live", null, {
        timeout: 10_000,
      });
      const before = await page.locator("ol#timeline > li.step").count();
      expect(before).toBe(3);

      // The page notes when the new step appears, and when it shows the completed tap (its duration and after screenshot).
      await page.evaluate((n: number) => {
        window.__appearedAt = null;
        window.__completedAt = null;
        const check = () => {
          const all = document.querySelectorAll("ol#timeline > li.step");
          if (all.length <= n) return;
          window.__appearedAt ??= Date.now();
          const last = all[all.length - 1];
          const done =
            last.dataset.status === "ok" &&
            last.querySelector(".step-duration") &&
            last.querySelector("img.thumb[data-role=after]");
          if (last.querySelector(".step-title")?.textContent.trim() === "tap" && done)
            window.__completedAt ??= Date.now();
        };
        new MutationObserver(check).observe(document.body, {
          subtree: true,
          childList: true,
          attributes: true,
          characterData: true,
        });
      }, before);
      const sentAt = Date.now();
      const tap = await act(c, "tap", PASSWORD);
      const answeredAt = Date.now();
      await page.waitForFunction(() => window.__completedAt !== null, null, { timeout: 5_000 }).catch(() => {});
      const seen = await page.evaluate(() => ({ appeared: window.__appearedAt, completed: window.__completedAt }));
      const latency = seen.completed === null ? null : seen.completed - answeredAt;
      // The same machine's clock: the daemon stamped the completion event when it appended it.
      const events = (await must(c, "events.list", { sessionId: live })) as any[];
      const completedEvent = events.find(
        (e) => e.payload.type === "actionCompleted" && e.payload.callId === tap.callId,
      );
      const fromEvent = seen.completed === null ? null : seen.completed - completedEvent.atMs;
      console.log(
        `live viewer: the new tap step ${seen.appeared === null ? "never appeared" : `appeared ${seen.appeared - answeredAt} ms`} and ${latency === null ? "never showed as completed" : `showed as completed ${latency} ms`} after the RPC answer (negative: before it), ${fromEvent} ms after the daemon appended the completion; the RPC took ${answeredAt - sentAt} ms`,
      );
      expect(latency).not.toBeNull();
      expect(latency as number).toBeLessThan(1000);
      expect(fromEvent as number).toBeLessThan(1000);
      const last = page.locator("ol#timeline > li.step").last();
      expect(
        await last.evaluate((e: any) => ({
          kind: e.dataset.kind,
          status: e.dataset.status,
          id: e.id.startsWith("seq-"),
        })),
      ).toEqual({ kind: "action", status: "ok", id: true });

      // The new step's screenshots come from the daemon, its tree too.
      await last.click();
      await page.locator("#detail section.tree ol.tree-lines > li").first().waitFor({ timeout: 5_000 });
      expect(
        await last
          .locator("img.thumb")
          .evaluateAll((els: any[]) =>
            els.map((e) => [e.dataset.role, e.getAttribute("src").startsWith("/evidence/")]),
          ),
      ).toEqual([
        ["before", true],
        ["after", true],
      ]);
      expect(await undecodedImages(page)).toEqual([]);
      // The Mock is where the first Session left it (signed in); every screen has its title there.
      expect(
        (await lines(page, "section.tree ol.tree-lines > li")).filter((l) =>
          /^Text ".+" id=title at=640,72 size=480x64$/.test(l),
        ),
      ).toHaveLength(1);

      const shot = join(shotsDir, "live-viewer.png");
      await page.screenshot({ path: shot });
      console.log(`live viewer screenshot: ${shot}`);

      await must(c, "session.end");
      await page.waitForFunction(() => document.querySelector("#live-status")?.textContent.trim() === "ended", null, {
        timeout: 5_000,
      });
      const ended = join(shotsDir, "live-viewer-ended.png");
      await page.screenshot({ path: ended });
      console.log(`live viewer screenshot after the end: ${ended}`);
      noProblems(problems);

      // The ended Session served again: no live status, the same steps plus the end.
      const again = await context.newPage();
      const againProblems = watchPage(again);
      await again.goto(url);
      await again.locator("ol#timeline > li.step").first().waitFor({ timeout: 5_000 });
      expect({
        status: (await again.locator("#live-status").allTextContents()).join("").trim(),
        steps: await again.locator("li.step").count(),
      }).toEqual({ status: "", steps: before + 2 });
      expect(await undecodedImages(again)).toEqual([]);
      noProblems(againProblems);
    } finally {
      await context.close();
      c.close();
    }
  }, 60_000);

  test("another origin can neither read the live page nor open its event-plane capability", async () => {
    const { client: c, sessionId: live } = await startSession(daemon.port);
    await must(c, "device.observe");
    const target = `http://127.0.0.1:${daemon.port}/sessions/${live}/report`;
    const attacker = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () =>
        new Response(
          `<!doctype html><title>attacker</title><script>
(async () => {
  const q = new URLSearchParams(location.search);
  const out = {};
  try { const r = await fetch(q.get("target")); out.cors = { status: r.status, type: r.type, text: (await r.text()).slice(0, 200) }; } catch (e) { out.cors = { error: String(e) }; }
  try { const r = await fetch(q.get("target"), { mode: "no-cors", credentials: "include" }); out.noCors = { status: r.status, type: r.type, length: (await r.text()).length }; } catch (e) { out.noCors = { error: String(e) }; }
  out.ws = await new Promise((resolve) => {
    let ws;
    try { ws = new WebSocket(q.get("endpoint"), "devicerail.events.v1"); } catch (e) { return resolve({ error: String(e) }); }
    ws.onopen = () => { resolve({ opened: true }); ws.close(); };
    ws.onclose = (e) => resolve({ opened: false, code: e.code });
  });
  window.outcome = out;
})();
</script>`,
          { headers: { "Content-Type": "text/html" } },
        ),
    });
    const context = await newContext();
    try {
      // The real page, as the daemon serves it, carries the capability; read here, it stays unused.
      const served = await fetch(target);
      expect(served.status).toBe(200);
      const { live: cap } = embeddedModel(await served.text());
      expect(cap?.endpoint).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/v\/[0-9a-f]{64}$/);

      for (const origin of [`http://127.0.0.1:${attacker.port}`, `http://localhost:${attacker.port}`]) {
        const page = await context.newPage();
        const answers: number[] = [];
        page.on("response", (res) => {
          if (res.url() === target) answers.push(res.status());
        });
        await page.goto(`${origin}/?${new URLSearchParams({ target, endpoint: cap.endpoint })}`);
        await page.waitForFunction(() => window.outcome !== undefined, null, { timeout: 10_000 });
        const outcome = await page.evaluate(() => window.outcome);
        console.log(`from ${origin}: ${JSON.stringify(outcome)}; the daemon answered ${JSON.stringify(answers)}`);
        // no-cors gives an opaque, empty answer, or none at all (Chromium's opaque-response blocking).
        const unread = (o: any) =>
          o.error?.startsWith("TypeError") || (o.type === "opaque" && o.status === 0 && o.length === 0);
        expect({
          origin,
          cors: outcome.cors.error ?? outcome.cors,
          noCorsUnread: unread(outcome.noCors),
          ws: outcome.ws,
        }).toEqual({
          origin,
          cors: expect.stringContaining("TypeError"),
          noCorsUnread: true,
          ws: { opened: false, code: 1006 },
        });
        await page.close();
      }
      // The event plane said 403 to the wrong Origin, and the capability is still good for the right one.
      expect(await upgradeStatus(cap.endpoint, `http://127.0.0.1:${attacker.port}`)).toBe(403);
      expect(await upgradeStatus(cap.endpoint, `http://127.0.0.1:${daemon.port}`)).toBe(101);

      // Plain requests: a foreign Origin is refused, localhost is sent to 127.0.0.1.
      for (const origin of ["http://evil.test", `http://127.0.0.1:${attacker.port}`]) {
        const res = await fetch(target, { headers: { Origin: origin } });
        expect({ origin, status: res.status, code: ((await res.json()) as any).error?.data?.code }).toEqual({
          origin,
          status: 403,
          code: "permission_denied",
        });
      }
      const page = await context.newPage();
      const res = await page.goto(`http://localhost:${daemon.port}/sessions/${live}/report`);
      expect({ status: res?.status(), url: page.url(), from: res?.request().redirectedFrom()?.url() }).toEqual({
        status: 200,
        url: target,
        from: `http://localhost:${daemon.port}/sessions/${live}/report`,
      });
    } finally {
      await context.close();
      attacker.stop(true);
      await must(c, "session.end").catch(() => {});
      c.close();
    }
  }, 60_000);
});

/** The status line of a WebSocket upgrade request to `endpoint` sent with `origin`. */
async function upgradeStatus(endpoint: string, origin: string): Promise<number> {
  const url = new URL(endpoint);
  const done = Promise.withResolvers<string>();
  let text = "";
  const socket = await Bun.connect({
    hostname: url.hostname,
    port: Number(url.port),
    socket: {
      data: (_s, chunk) => {
        text += new TextDecoder().decode(chunk);
        if (text.includes("\r\n\r\n")) done.resolve(text);
      },
      close: () => done.resolve(text),
      error: () => done.resolve(text),
    },
  });
  socket.write(
    `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${btoa("0123456789abcdef")}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: devicerail.events.v1\r\nOrigin: ${origin}\r\n\r\n`,
  );
  const answer = await within(done.promise, 5_000, "no answer to the upgrade request");
  socket.end();
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
}
