/**
 * `<data dir>/daemon.token`: the secret the background daemon's TCP port requires. The daemon
 * makes a new one each time it starts (after it holds the data directory's lock, so a daemon that
 * lost a start-up race never replaces the winner's), keeps it 0600 in the 0700 data directory, and
 * removes it on a clean stop. Local clients of the data directory (the CLI, `devicerail mcp`, the
 * report opener) read it from there: it is never in argv, the environment of a child, or a log.
 */
import { readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { randomSecret, tokenProblem } from "../transports/token.ts";
import { replacePrivateFile } from "./private-file.ts";

export const localTokenPath = (dataDir: string) => join(dataDir, "daemon.token");

/** 256 random bits, base64url: 43 printable characters, within the token rules of transports/token.ts. */
export const newLocalToken = (): string => randomSecret(32);

/** Writes a new token for this daemon and returns it. */
export function writeLocalToken(dataDir: string): string {
  const token = newLocalToken();
  replacePrivateFile(localTokenPath(dataDir), `${token}\n`);
  return token;
}

/** The token in the file, or null when there is none (or it is not a usable token). */
export function readLocalToken(path: string): string | null {
  try {
    const token = readFileSync(path, "utf8").trim();
    return tokenProblem(token) === null ? token : null;
  } catch {
    return null;
  }
}

/** Removed on a clean stop, unless a successor has written its own meanwhile. */
export function removeLocalToken(dataDir: string, token: string): void {
  const path = localTokenPath(dataDir);
  if (readLocalToken(path) !== token) return;
  try {
    unlinkSync(path);
  } catch {}
}
