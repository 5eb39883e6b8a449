/**
 * The live report of the daemon the CLI starts, whose TCP port requires a token a browser cannot
 * send: `sessions --open` hands the browser a single-use ticket instead, traded for a view key on
 * the first load. Driven in Debian's headless Chromium, like a person opening the printed URL.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readRecord } from "../../src/server/daemon-record.ts";
import { helloParams, tempDataDir } from "../support/daemon.ts";
import { browserForFile, describeWithChromium, undecodedImages, watchPage } from "../support/chromium.ts";
import { TcpClient } from "../support/tcp-client.ts";
import { cli, cliJson } from "../cli/run.ts";

// page.evaluate callbacks run in the browser; the project's TypeScript setup has no DOM types.
declare const document: any;

const browser = browserForFile();
const env = { DEVICERAIL_DATA_DIR: tempDataDir() };
afterAll(async () => {
  await cli(["daemon", "stop"], env);
});

async function must(c: TcpClient, method: string, params?: unknown): Promise<any> {
  const r = await c.call(method, params);
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result;
}

describeWithChromium("sessions --open on a port that requires a token", () => {
  test("the printed ticket opens the live page once, which follows the Session with its screenshots, and reloads without it", async () => {
    // The first command starts the background daemon, whose port requires daemon.token.
    expect((await cli(["tap", "640", "148"], env)).code).toBe(0);
    const record = readRecord(env.DEVICERAIL_DATA_DIR);
    expect(record?.socket).toBeString();
    const token = readFileSync(join(env.DEVICERAIL_DATA_DIR, "daemon.token"), "utf8").trim();

    // A client on the Unix socket (no token there) keeps a Session open for the page to follow.
    const c = await TcpClient.connectUnix(record?.socket as string);
    const context = await browser().newContext();
    try {
      await must(c, "system.hello", helloParams());
      await must(c, "device.connect");
      const { id: sessionId } = await must(c, "session.start");
      await must(c, "device.observe");
      await must(c, "device.execute", { id: crypto.randomUUID(), name: "tap", arguments: { x: 640, y: 148 } });

      const opened = await cli(["sessions", "--open", sessionId], { ...env, PATH: "/nonexistent" });
      const url = opened.stdout.trim();
      expect(url).toMatch(
        new RegExp(`^http://127\\.0\\.0\\.1:${record?.port}/sessions/${sessionId}/report\\?ticket=[A-Za-z0-9_-]{32}$`),
      );
      expect([opened.code, opened.stderr]).toEqual([0, `devicerail: could not start a browser; open ${url}\n`]);
      expect(`${opened.stdout}${opened.stderr}`).not.toContain(token);

      const page = await context.newPage();
      const problems = watchPage(page);
      const response = await page.goto(url);
      expect(response?.status()).toBe(200);
      // The ticket is spent at once: the address the browser keeps holds a view key instead.
      expect(page.url()).toMatch(new RegExp(`/sessions/${sessionId}/report\\?view=[A-Za-z0-9_-]{32}$`));
      await page.waitForFunction(() => document.querySelector("#live-status")?.textContent.trim() === "live", null, {
        timeout: 10_000,
      });
      expect(await page.locator("ol#timeline > li.step").count()).toBe(3);
      expect(await undecodedImages(page)).toEqual([]);

      await must(c, "device.execute", { id: crypto.randomUUID(), name: "tap", arguments: { x: 640, y: 220 } });
      await page.waitForFunction(
        () => document.querySelectorAll("ol#timeline > li.step img.thumb[data-role=after]").length === 2,
        null,
        { timeout: 10_000 },
      );
      expect(await undecodedImages(page)).toEqual([]);
      expect(problems).toEqual({ consoleErrors: [], pageErrors: [], failedRequests: [] });

      // Reloading works (the view key admits this Session's page); the spent ticket does not.
      expect((await page.reload())?.status()).toBe(200);
      expect(await page.locator("ol#timeline > li.step").count()).toBe(4);
      const again = await context.newPage();
      const spent = await again.goto(url);
      expect(spent?.status()).toBe(401);
      expect(JSON.parse((await spent?.text()) as string).error.data).toEqual({
        code: "authentication_failed",
        message: `this report link was used already or has expired; run \`devicerail sessions --open ${sessionId}\` again`,
        retryable: false,
        details: { reason: "reportTicketSpent" },
      });

      // Without the page's key, its evidence and the other routes still need the token.
      const src = await page.locator("img.thumb").first().getAttribute("src");
      expect(src).toMatch(/^\/evidence\/[0-9a-f]{64}\?view=[A-Za-z0-9_-]{32}$/);
      const base = `http://127.0.0.1:${record?.port}`;
      const key = (src as string).split("view=")[1];
      expect(
        await Promise.all([
          fetch(`${base}${src}`).then((r) => r.status),
          fetch(`${base}${(src as string).split("?")[0]}`).then((r) => r.status),
          fetch(`${base}/sessions/${sessionId}/export?view=${key}`).then((r) => r.status),
          fetch(`${base}/devices?view=${key}`).then((r) => r.status),
          fetch(`${base}/sessions/${sessionId}/report/ticket`, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: "{}",
          }).then((r) => r.status),
        ]),
      ).toEqual([200, 401, 401, 401, 401]);

      await must(c, "session.end");
      expect((await cliJson(["sessions"], env)).sessions.find((s: { id: string }) => s.id === sessionId)?.state).toBe(
        "ended",
      );
    } finally {
      await context.close();
      c.close();
    }
  }, 60_000);
});
