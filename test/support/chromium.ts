/**
 * Real-browser tests: Debian's Chromium driven by playwright-core. `describeWithChromium` runs a
 * suite when the browser is installed, fails it under CI=true when it is not (a CI image without
 * Chromium must not pass by skipping) and skips it with a warning elsewhere. `browserForFile`
 * launches one headless browser for the calling file; `watchPage` collects what a page got wrong.
 */
import { afterAll, beforeAll, describe, test } from "bun:test";
import { existsSync } from "node:fs";
import { inflateSync } from "node:zlib";
import { type Browser, type Page, chromium } from "playwright-core";

// page.evaluate callbacks run in the browser; the project's TypeScript setup has no DOM types.
declare const document: any;

export const CHROMIUM_PATH = "/usr/bin/chromium";
export const chromiumInstalled = existsSync(CHROMIUM_PATH);
let warned = false;

export function describeWithChromium(name: string, body: () => void): void {
  if (chromiumInstalled) return describe(name, body);
  if (["true", "1"].includes((process.env.CI ?? "").toLowerCase())) {
    return describe(name, () => {
      test(`chromium is installed at ${CHROMIUM_PATH}`, () => {
        throw new Error(
          `${CHROMIUM_PATH} is missing: install Debian's chromium package (apt-get install -y chromium); these tests must not be skipped in CI`,
        );
      });
    });
  }
  if (!warned)
    console.warn(
      `skipping browser tests: ${CHROMIUM_PATH} is missing (apt-get install -y chromium); under CI=true they fail instead`,
    );
  warned = true;
  describe.skip(name, body);
}

/** A headless Chromium, closed by `await using`. */
export async function launchChromium(): Promise<Browser & AsyncDisposable> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true });
  return Object.assign(browser, { [Symbol.asyncDispose]: () => browser.close() });
}

/** One browser for the calling test file: launched before its tests, closed after them. */
export function browserForFile(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (chromiumInstalled) browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error("the file's browser is not running");
    return browser;
  };
}

export interface PageProblems {
  /** console.error messages (CSP violations land here too). */
  consoleErrors: string[];
  /** Uncaught exceptions and unhandled rejections of the page's scripts. */
  pageErrors: string[];
  /** Requests that failed at the network level ("url: reason"). */
  failedRequests: string[];
}

/** Starts collecting the page's console errors, page errors and failed requests. */
export function watchPage(page: Page): PageProblems {
  const problems: PageProblems = { consoleErrors: [], pageErrors: [], failedRequests: [] };
  page.on("console", (m) => {
    if (m.type() === "error")
      problems.consoleErrors.push(`${m.text()} (${m.location().url}:${m.location().lineNumber})`);
  });
  page.on("pageerror", (e) => problems.pageErrors.push(String(e.stack ?? e)));
  page.on("requestfailed", (r) => problems.failedRequests.push(`${r.url().slice(0, 200)}: ${r.failure()?.errorText}`));
  return problems;
}

/** Every <img> with a source, scrolled into view and loaded: those that did not decode. */
export async function undecodedImages(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const bad: string[] = [];
    for (const img of [...document.querySelectorAll("img")]) {
      const src = img.getAttribute("src");
      if (!src) continue;
      img.scrollIntoView({ block: "nearest" });
      if (!img.complete)
        await new Promise((r) => {
          img.addEventListener("load", r, { once: true });
          img.addEventListener("error", r, { once: true });
          setTimeout(r, 3_000);
        });
      if (!(img.naturalWidth > 0)) bad.push(`${img.className || img.id || "img"} ${src.slice(0, 60)}`);
    }
    return bad;
  });
}

export interface Rgba {
  width: number;
  height: number;
  /** [r, g, b, a] of the pixel at (x, y). */
  at(x: number, y: number): [number, number, number, number];
}

const paeth = (a: number, b: number, c: number) => {
  const p = a + b - c;
  const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
};

/**
 * Decodes the PNGs Chromium's screenshots are (8-bit RGB or RGBA, not interlaced, any row
 * filter): Bun.Image decodes but gives no access to the pixels.
 */
export function decodeScreenshot(png: Uint8Array): Rgba {
  const v = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const [width, height, depth, colourType, interlace] = [v.getUint32(16), v.getUint32(20), png[24], png[25], png[28]];
  if (depth !== 8 || (colourType !== 2 && colourType !== 6) || interlace !== 0)
    throw new Error(`unsupported PNG: depth ${depth}, colour type ${colourType}, interlace ${interlace}`);
  const idat: Uint8Array[] = [];
  for (let pos = 8; pos < png.length; ) {
    const len = v.getUint32(pos);
    if (String.fromCharCode(...png.subarray(pos + 4, pos + 8)) === "IDAT")
      idat.push(png.subarray(pos + 8, pos + 8 + len));
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const bpp = colourType === 6 ? 4 : 3;
  const stride = width * bpp;
  const out = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    const row = y * stride;
    for (let i = 0; i < stride; i++) {
      const x = raw[src + i] as number;
      const a = i >= bpp ? (out[row + i - bpp] as number) : 0;
      const b = y > 0 ? (out[row - stride + i] as number) : 0;
      const c = i >= bpp && y > 0 ? (out[row - stride + i - bpp] as number) : 0;
      const predicted =
        filter === 0
          ? 0
          : filter === 1
            ? a
            : filter === 2
              ? b
              : filter === 3
                ? (a + b) >> 1
                : filter === 4
                  ? paeth(a, b, c)
                  : Number.NaN;
      if (Number.isNaN(predicted)) throw new Error(`unknown PNG row filter ${filter}`);
      out[row + i] = (x + predicted) & 0xff;
    }
  }
  return {
    width,
    height,
    at(x, y) {
      const i = y * stride + x * bpp;
      return [out[i] as number, out[i + 1] as number, out[i + 2] as number, bpp === 4 ? (out[i + 3] as number) : 255];
    },
  };
}
