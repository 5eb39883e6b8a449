/**
 * `simctl io <device> screenshot|recordVideo`: real PNG (or flat JPEG) bytes to stdout or a file
 * with the stderr lines of research §1.2, and a recorder that only SIGINT finalizes.
 */
import { existsSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { CliContext } from "./fake-cli.ts";
import { screenshotJpeg, screenshotPng } from "./screenshot.ts";
import { fail, onDevice, option, type SimctlHandler, simError, unhandled } from "./simctl-support.ts";
import { SCREEN_SURFACES_TIMEOUT } from "./xcode.ts";

const EXT_TYPES: Record<string, string> = {
  png: "PNG",
  jpg: "JPEG",
  jpeg: "JPEG",
  tiff: "TIFF",
  bmp: "BMP",
  gif: "GIF",
};
const DISPLAY_NOTE =
  "Note: No display specified. Defaulting to display: 6E2B1F3A-9C4D-4E5F-8A7B-1C2D3E4F5A6B (screenID: 1, name: LCD)\n";

async function screenshot(ctx: CliContext, ref: string | undefined, args: string[]): Promise<number> {
  const t = option(args, "--type");
  const disp = option(t.rest, "--display");
  const mask = option(disp.rest, "--mask");
  const [target, ...extra] = mask.rest;
  if (!target || extra.length > 0)
    fail(ctx, {
      stderr:
        "Usage: simctl io <device> screenshot [--type=<type>] [--display=<display>] [--mask=<policy>] <file or url>\n",
      exitCode: 64,
    });
  if (mask.value !== undefined && !["ignored", "alpha", "black"].includes(mask.value))
    fail(ctx, { stderr: `Invalid mask policy: ${mask.value}\n`, exitCode: 1 });
  if (disp.value !== undefined && disp.value !== "internal") unhandled(ctx, `screenshot --display=${disp.value}`);
  const ext = target === "-" ? undefined : /\.([A-Za-z]+)$/.exec(target)?.[1]?.toLowerCase();
  const type = (t.value ?? ext ?? "png").toLowerCase();
  if (type === "gif") fail(ctx, { stderr: "Invalid file type: gif\n", exitCode: 1 });
  if (!["png", "jpeg", "jpg"].includes(type)) unhandled(ctx, `screenshot --type=${type}`);
  const bytes = await onDevice(ctx, "io", ref, true, (d) => {
    if (d.screenSurfacesTimeouts > 0) {
      d.screenSurfacesTimeouts--;
      return null;
    }
    return type === "png" ? screenshotPng(d) : screenshotJpeg(d);
  });
  // The display not up yet (xcode.ts SCREEN_SURFACES_TIMEOUT): exit 60, nothing written.
  if (bytes === null) fail(ctx, simError("NSPOSIXErrorDomain", 60, SCREEN_SURFACES_TIMEOUT));
  if (t.value === undefined && ext && EXT_TYPES[ext]) ctx.err(`Detected file type from extension: ${EXT_TYPES[ext]}\n`);
  if (disp.value === undefined) ctx.err(DISPLAY_NOTE);
  if (target === "-") ctx.out(bytes);
  else {
    writeFileSync(resolve(target), bytes);
    ctx.err(`Wrote screenshot to: ${target}\n`);
  }
  return 0;
}

async function recordVideo(ctx: CliContext, ref: string | undefined, args: string[]): Promise<number> {
  const codec = option(args, "--codec");
  const rest = option(option(codec.rest, "--display").rest, "--mask").rest;
  const force = rest.includes("--force") || rest.includes("-f");
  const [target] = rest.filter((a) => a !== "--force" && a !== "-f");
  if (!target)
    fail(ctx, {
      stderr:
        "Usage: simctl io <device> recordVideo [--codec=<codec>] [--display=<display>] [--mask=<policy>] [--force] <file or url>\n",
      exitCode: 64,
    });
  const path = resolve(target);
  if (existsSync(path) && !force)
    fail(ctx, { stderr: `Error: File already exists at ${target}. Use --force to overwrite.\n`, exitCode: 1 });
  await onDevice(ctx, "io", ref, true, () => 0);
  // A placeholder that only SIGINT finalizes: a SIGKILL leaves the "incomplete" marker behind.
  writeFileSync(path, "fake-recordVideo incomplete\n");
  const started = Date.now();
  ctx.finishing = new Promise<number>((done) =>
    process.on("SIGINT", () => {
      writeFileSync(path, `fake-recordVideo finalized codec=${codec.value ?? "hevc"} ms=${Date.now() - started}\n`);
      ctx.err(`Wrote video to: ${target}\n`);
      done(0);
    }),
  );
  setInterval(() => undefined, 1 << 30);
  return 0;
}

export const io: SimctlHandler = async (ctx, [ref, op, ...args]) => {
  if (op === "screenshot") return screenshot(ctx, ref, args);
  if (op === "recordVideo") return recordVideo(ctx, ref, args);
  unhandled(ctx, `simctl io ${op ?? ""}`);
};
