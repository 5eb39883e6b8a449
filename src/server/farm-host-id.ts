/** A host's id in its farm: made once, kept in the data directory, so a restarted daemon is the same host (with a new epoch). */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { replacePrivateFile } from "./private-file.ts";

export function farmHostId(dataDir: string): string {
  const file = join(dataDir, "farm-host-id");
  if (existsSync(file)) {
    const id = readFileSync(file, "utf8").trim();
    if (/^[0-9a-f-]{36}$/.test(id)) return id;
  }
  const id = crypto.randomUUID();
  replacePrivateFile(file, `${id}\n`);
  return id;
}
