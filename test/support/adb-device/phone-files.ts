/** The simulated phone's in-memory file system: shell redirections, `cat`, `rm`, sync push/pull. */
import { S_IFDIR, S_IFREG, type SyncFs, type SyncStat } from "./adbd-sync.ts";
import { bytes, concat } from "./command-io.ts";

/** Fixed so that listings are reproducible: 2023-11-14T22:13:20Z. */
export const FILE_MTIME = 1_700_000_000;
const BASE_DIRS = [
  "/",
  "/sdcard",
  "/data",
  "/data/local",
  "/data/local/tmp",
  "/system",
  "/system/bin",
  "/dev",
  "/storage",
  "/storage/emulated",
  "/storage/emulated/0",
];

/** Absolute, without `.`/`..` segments or a trailing slash; adbd's working directory is `/`. */
export function normalizePath(path: string): string {
  const out: string[] = [];
  for (const seg of path.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  return `/${out.join("/")}`;
}

const parentOf = (p: string) => (p === "/" ? "/" : normalizePath(`${p}/..`));

export class PhoneFiles implements SyncFs {
  private readonly data = new Map<string, { bytes: Uint8Array; mode: number; mtime: number }>();
  private readonly dirs = new Set(BASE_DIRS);

  constructor(initial: Record<string, string | Uint8Array> = {}) {
    for (const [p, d] of Object.entries(initial)) this.put(p, bytes(d));
  }

  get(path: string): Uint8Array | null {
    return this.data.get(normalizePath(path))?.bytes ?? null;
  }

  text(path: string): string | null {
    const b = this.get(path);
    return b && new TextDecoder().decode(b);
  }

  has(path: string): boolean {
    return this.data.has(normalizePath(path));
  }

  isDir(path: string): boolean {
    return this.dirs.has(normalizePath(path));
  }

  /** Every file path, sorted. */
  paths(): string[] {
    return [...this.data.keys()].sort();
  }

  put(
    path: string,
    data: string | Uint8Array,
    options: { append?: boolean; mode?: number; mtime?: number } = {},
  ): void {
    const p = normalizePath(path);
    const old = this.data.get(p);
    const b = bytes(data);
    this.data.set(p, {
      bytes: options.append && old ? concat([old.bytes, b]) : b,
      mode: options.mode ?? old?.mode ?? 0o644,
      mtime: options.mtime ?? FILE_MTIME,
    });
    for (let d = parentOf(p); !this.dirs.has(d); d = parentOf(d)) this.dirs.add(d);
  }

  remove(path: string): boolean {
    return this.data.delete(normalizePath(path));
  }

  stat(path: string): SyncStat | null {
    const p = normalizePath(path);
    const f = this.data.get(p);
    if (f) return { mode: S_IFREG | f.mode, size: f.bytes.length, mtime: f.mtime };
    return this.dirs.has(p) ? { mode: S_IFDIR | 0o771, size: 4096, mtime: FILE_MTIME } : null;
  }

  list(path: string): (SyncStat & { name: string })[] | null {
    const p = normalizePath(path);
    if (!this.dirs.has(p)) return null;
    const names = new Set<string>();
    for (const child of [...this.data.keys(), ...this.dirs])
      if (child !== p && parentOf(child) === p) names.add(child.slice(p === "/" ? 1 : p.length + 1));
    return [...names].sort().map((name) => ({ name, ...(this.stat(`${p}/${name}`) as SyncStat) }));
  }

  read(path: string): Uint8Array | null {
    return this.get(path);
  }

  write(path: string, data: Uint8Array, mode: number, mtime: number): string | null {
    if (this.isDir(path)) return `${path}: Is a directory`;
    this.put(path, data, { mode, mtime });
    return null;
  }
}
