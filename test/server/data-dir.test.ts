import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DataDirError, ensurePrivateDir, resolveDataPaths } from "../../src/server/data-dir.ts";

describe("resolveDataPaths", () => {
  const paths = (dataDir: string, sep = "/") => ({
    dataDir,
    evidenceDir: `${dataDir}${sep}evidence`,
    databasePath: `${dataDir}${sep}devicerail.sqlite`,
  });

  test("uses ~/.local/share/devicerail when on Linux without XDG_DATA_HOME", () => {
    expect(resolveDataPaths({}, "linux", "/home/ana", "/srv")).toEqual(paths("/home/ana/.local/share/devicerail"));
  });

  test("uses $XDG_DATA_HOME/devicerail when on Linux with XDG_DATA_HOME", () => {
    expect(resolveDataPaths({ XDG_DATA_HOME: "/data/xdg" }, "linux", "/home/ana", "/srv")).toEqual(
      paths("/data/xdg/devicerail"),
    );
  });

  test("ignores XDG_DATA_HOME when it is relative", () => {
    expect(resolveDataPaths({ XDG_DATA_HOME: "xdg" }, "linux", "/home/ana", "/srv")).toEqual(
      paths("/home/ana/.local/share/devicerail"),
    );
  });

  test("follows the XDG layout when on another Unix", () => {
    expect(resolveDataPaths({}, "freebsd", "/home/ana", "/srv")).toEqual(paths("/home/ana/.local/share/devicerail"));
  });

  test("uses ~/Library/Application Support/devicerail when on macOS, even with XDG_DATA_HOME", () => {
    const expected = paths("/Users/ana/Library/Application Support/devicerail");
    expect(resolveDataPaths({}, "darwin", "/Users/ana", "/srv")).toEqual(expected);
    expect(resolveDataPaths({ XDG_DATA_HOME: "/data/xdg" }, "darwin", "/Users/ana", "/srv")).toEqual(expected);
  });

  test("uses %LOCALAPPDATA%\\devicerail when on Windows with LOCALAPPDATA", () => {
    expect(
      resolveDataPaths({ LOCALAPPDATA: "D:\\Profiles\\ana\\Local" }, "win32", "C:\\Users\\ana", "C:\\work"),
    ).toEqual(paths("D:\\Profiles\\ana\\Local\\devicerail", "\\"));
  });

  test("falls back to ~/AppData/Local/devicerail when on Windows without LOCALAPPDATA", () => {
    expect(resolveDataPaths({}, "win32", "C:\\Users\\ana", "C:\\work")).toEqual(
      paths("C:\\Users\\ana\\AppData\\Local\\devicerail", "\\"),
    );
  });

  test("uses DEVICERAIL_DATA_DIR when it is set", () => {
    const env = { DEVICERAIL_DATA_DIR: "/var/lib/devicerail", XDG_DATA_HOME: "/data/xdg" };
    expect(resolveDataPaths(env, "linux", "/home/ana", "/srv")).toEqual(paths("/var/lib/devicerail"));
    expect(resolveDataPaths({ DEVICERAIL_DATA_DIR: "E:\\rail" }, "win32", "C:\\Users\\ana", "C:\\work")).toEqual(
      paths("E:\\rail", "\\"),
    );
  });

  test("resolves against cwd when DEVICERAIL_DATA_DIR is relative", () => {
    expect(resolveDataPaths({ DEVICERAIL_DATA_DIR: "state/../rail" }, "linux", "/home/ana", "/srv/app")).toEqual(
      paths("/srv/app/rail"),
    );
    expect(resolveDataPaths({ DEVICERAIL_DATA_DIR: "rail" }, "win32", "C:\\Users\\ana", "C:\\work")).toEqual(
      paths("C:\\work\\rail", "\\"),
    );
  });

  test("uses DEVICERAIL_EVIDENCE_DIR for evidence only when it is set", () => {
    expect(resolveDataPaths({ DEVICERAIL_EVIDENCE_DIR: "/mnt/big/evidence" }, "linux", "/home/ana", "/srv")).toEqual({
      dataDir: "/home/ana/.local/share/devicerail",
      evidenceDir: "/mnt/big/evidence",
      databasePath: "/home/ana/.local/share/devicerail/devicerail.sqlite",
    });
    expect(
      resolveDataPaths({ DEVICERAIL_DATA_DIR: "/d", DEVICERAIL_EVIDENCE_DIR: "ev" }, "linux", "/home/ana", "/srv"),
    ).toEqual({
      dataDir: "/d",
      evidenceDir: "/srv/ev",
      databasePath: "/d/devicerail.sqlite",
    });
  });

  test("treats every variable as unset when its value is empty", () => {
    const env = { DEVICERAIL_DATA_DIR: "", DEVICERAIL_EVIDENCE_DIR: "", XDG_DATA_HOME: "", LOCALAPPDATA: "" };
    expect(resolveDataPaths(env, "linux", "/home/ana", "/srv")).toEqual(paths("/home/ana/.local/share/devicerail"));
    expect(resolveDataPaths(env, "win32", "C:\\Users\\ana", "C:\\work")).toEqual(
      paths("C:\\Users\\ana\\AppData\\Local\\devicerail", "\\"),
    );
  });
});

describe("ensurePrivateDir", () => {
  let root: string;
  const mode = (path: string) => fs.statSync(path).mode & 0o777;

  /** The message of the DataDirError the call throws, or a marker when it throws something else or nothing. */
  const refusal = (f: () => void): string => {
    try {
      f();
      return "did not throw";
    } catch (e) {
      return e instanceof DataDirError ? e.message : `not a DataDirError: ${String(e)}`;
    }
  };

  beforeEach(() => {
    root = fs.mkdtempSync(join(tmpdir(), "data-dir-"));
  });

  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  test("creates every missing level with mode 0700 when the folder is nested", () => {
    const leaf = join(root, "a", "b", "c");
    ensurePrivateDir(leaf);
    expect([mode(join(root, "a")), mode(join(root, "a", "b")), mode(leaf)]).toEqual([0o700, 0o700, 0o700]);
  });

  test("creates 0700 folders even when the umask would strip owner bits", () => {
    const previous = process.umask(0o277);
    try {
      ensurePrivateDir(join(root, "x", "y"));
    } finally {
      process.umask(previous);
    }
    expect([mode(join(root, "x")), mode(join(root, "x", "y"))]).toEqual([0o700, 0o700]);
  });

  test("tightens the mode to 0700 when an existing folder is 0755", () => {
    const dir = join(root, "open");
    fs.mkdirSync(dir);
    fs.chmodSync(dir, 0o755);
    ensurePrivateDir(dir);
    expect(mode(dir)).toEqual(0o700);
  });

  test("leaves an existing 0700 folder and its contents alone", () => {
    const dir = join(root, "private");
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.writeFileSync(join(dir, "keep.txt"), "x");
    ensurePrivateDir(dir);
    expect({ mode: mode(dir), entries: fs.readdirSync(dir) }).toEqual({ mode: 0o700, entries: ["keep.txt"] });
  });

  test("refuses with a message naming the path when the folder is a symlink", () => {
    const target = join(root, "target");
    const link = join(root, "link");
    fs.mkdirSync(target, { mode: 0o700 });
    fs.symlinkSync(target, link);
    expect(refusal(() => ensurePrivateDir(link))).toEqual(
      `${link} is a symbolic link; devicerail keeps its private state only in a real directory, so replace the link with a directory or set DEVICERAIL_DATA_DIR to the link's target`,
    );
  });

  test("refuses with a message naming the path when a regular file is in the way", () => {
    const file = join(root, "file");
    fs.writeFileSync(file, "x");
    expect(refusal(() => ensurePrivateDir(file))).toEqual(
      `${file} exists but is not a directory; move that file away or set DEVICERAIL_DATA_DIR to another location`,
    );
  });

  test("refuses with a message naming the path when a parent is a regular file", () => {
    const file = join(root, "file");
    fs.writeFileSync(file, "x");
    const sub = join(file, "sub");
    expect(refusal(() => ensurePrivateDir(sub))).toEqual(
      `${sub} cannot be a folder because a file sits where one of its parent folders should be; move that file away or set DEVICERAIL_DATA_DIR to another location`,
    );
  });

  test("refuses with a message naming the owner when the folder belongs to another uid", () => {
    const dir = join(root, "foreign");
    fs.mkdirSync(dir, { mode: 0o700 });
    const owner = fs.statSync(dir).uid;
    expect(refusal(() => ensurePrivateDir(dir, owner + 1))).toEqual(
      `${dir} is owned by uid ${owner}, not by the current user (uid ${owner + 1}); run devicerail as its owner, fix it with chown, or set DEVICERAIL_DATA_DIR to a folder you own`,
    );
  });
});
