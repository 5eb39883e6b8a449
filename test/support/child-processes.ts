import { readdirSync, readFileSync } from "node:fs";

/** Command lines of this test process's children whose argv holds `word` (Linux /proc). */
export function children(word: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const argv = readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0");
      if (parent === process.pid && argv.includes(word)) found.push(argv.join(" "));
    } catch {}
  }
  return found;
}
