import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OUT_FILE, bundleReportScript, staleReportScript } from "../../scripts/gen-report-script.ts";

describe("the report page's script bundle", () => {
  test("bundles to the same text every time, from any working directory", async () => {
    const first = await bundleReportScript();
    const cwd = process.cwd();
    process.chdir(tmpdir());
    try {
      expect(await bundleReportScript()).toBe(first);
    } finally {
      process.chdir(cwd);
    }
    expect(process.cwd()).toBe(cwd);
  });

  test("is one classic strict script with nothing of the server in it", async () => {
    const text = await bundleReportScript();
    expect(text.split("\n").slice(1, 3)).toEqual(['"use strict";', "(() => {"]);
    expect(text).not.toMatch(/\bimport\b|\bexport\b|\brequire\(|valibot|\bBun\.|["']node:/);
  });

  test("--check reports a committed bundle that differs from the browser code's, or is missing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "report-script-"));
    try {
      const copy = join(dir, "report.js.txt");
      writeFileSync(copy, readFileSync(OUT_FILE, "utf8"));
      expect(await staleReportScript(copy)).toEqual([]);
      writeFileSync(copy, `${readFileSync(OUT_FILE, "utf8")}\n// edited by hand\n`);
      expect(await staleReportScript(copy)).toEqual([`stale: ${copy}`]);
      expect(await staleReportScript(join(dir, "none.txt"))).toEqual([`missing: ${join(dir, "none.txt")}`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
