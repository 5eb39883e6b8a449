import { chmodSync, lstatSync, mkdirSync, type Stats } from "node:fs";
import { dirname, posix, resolve, win32 } from "node:path";
import { messageOf } from "../protocol/errors.ts";

export interface DataPaths {
  dataDir: string;
  evidenceDir: string;
  databasePath: string;
}

export class DataDirError extends Error {
  override name = "DataDirError";
}

const APP = "devicerail";

/** An empty value is how shells and service managers spell "unset", so it must not mean the cwd. */
const setting = (env: Record<string, string | undefined>, key: string): string | undefined => env[key] || undefined;

/**
 * Pure: env DEVICERAIL_DATA_DIR, else the platform default: Linux $XDG_DATA_HOME/devicerail or
 * ~/.local/share/devicerail; macOS ~/Library/Application Support/devicerail; Windows
 * %LOCALAPPDATA%\devicerail (fallback ~/AppData/Local/devicerail). DEVICERAIL_EVIDENCE_DIR
 * overrides the evidence folder (default <dataDir>/evidence). Relative DEVICERAIL_* paths are
 * resolved against cwd, which must be absolute. A relative XDG_DATA_HOME or LOCALAPPDATA is
 * ignored, as the XDG base directory specification requires, rather than tied to the cwd.
 */
export function resolveDataPaths(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform,
  home: string,
  cwd: string,
): DataPaths {
  // The target platform decides the separator, so results do not depend on the host running the code.
  const path = platform === "win32" ? win32 : posix;
  const absolute = (key: string) => {
    const value = setting(env, key);
    return value !== undefined && path.isAbsolute(value) ? value : undefined;
  };
  const fromEnv = (key: string) => {
    const value = setting(env, key);
    return value === undefined ? undefined : path.resolve(cwd, value);
  };

  let platformDefault: string;
  if (platform === "win32")
    platformDefault = path.join(absolute("LOCALAPPDATA") ?? path.join(home, "AppData", "Local"), APP);
  else if (platform === "darwin") platformDefault = path.join(home, "Library", "Application Support", APP);
  else platformDefault = path.join(absolute("XDG_DATA_HOME") ?? path.join(home, ".local", "share"), APP);

  const dataDir = fromEnv("DEVICERAIL_DATA_DIR") ?? path.normalize(platformDefault);
  return {
    dataDir,
    evidenceDir: fromEnv("DEVICERAIL_EVIDENCE_DIR") ?? path.join(dataDir, "evidence"),
    databasePath: path.join(dataDir, `${APP}.sqlite`),
  };
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (e) {
    const code = typeof e === "object" && e !== null && "code" in e ? e.code : undefined;
    if (code === "ENOENT") return null;
    if (code === "ENOTDIR")
      throw new DataDirError(
        `${path} cannot be a folder because a file sits where one of its parent folders should be; move that file away or set DEVICERAIL_DATA_DIR to another location`,
      );
    throw new DataDirError(`cannot inspect ${path}: ${messageOf(e)}`);
  }
}

/**
 * Creates the folder (and parents) with mode 0700; when it exists: must be a real directory (not a
 * symlink), owned by the current uid where the platform has uids; if its mode grants group/other
 * access, tighten it to 0700. Throws DataDirError with a clear, actionable English message otherwise.
 * `uid` is the expected owner (tests pass another to exercise the refusal).
 */
export function ensurePrivateDir(path: string, uid: number | undefined = process.getuid?.()): void {
  // Windows has no POSIX mode bits or uids; its ACLs already keep a profile folder private.
  const posixModes = process.platform !== "win32";
  let stat = lstatOrNull(path);
  if (stat === null) {
    let firstCreated: string | undefined;
    try {
      firstCreated = mkdirSync(path, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw new DataDirError(
        `cannot create the devicerail data folder ${path}: ${messageOf(e)}; choose another location with DEVICERAIL_DATA_DIR`,
      );
    }
    if (posixModes && firstCreated !== undefined) tightenCreated(firstCreated, path);
    stat = lstatOrNull(path);
    if (stat === null)
      throw new DataDirError(`${path} disappeared right after it was created; check what else manages that folder`);
  }
  if (stat.isSymbolicLink())
    throw new DataDirError(
      `${path} is a symbolic link; devicerail keeps its private state only in a real directory, so replace the link with a directory or set DEVICERAIL_DATA_DIR to the link's target`,
    );
  if (!stat.isDirectory())
    throw new DataDirError(
      `${path} exists but is not a directory; move that file away or set DEVICERAIL_DATA_DIR to another location`,
    );
  if (!posixModes) return;
  if (uid !== undefined && stat.uid !== uid)
    throw new DataDirError(
      `${path} is owned by uid ${stat.uid}, not by the current user (uid ${uid}); run devicerail as its owner, fix it with chown, or set DEVICERAIL_DATA_DIR to a folder you own`,
    );
  if ((stat.mode & 0o077) !== 0) {
    try {
      chmodSync(path, 0o700);
    } catch (e) {
      throw new DataDirError(
        `${path} is readable by other users and could not be restricted to mode 0700: ${messageOf(e)}`,
      );
    }
  }
}

/** mkdir's mode is filtered by the umask, so every folder it just made is set to 0700 explicitly. */
function tightenCreated(firstCreated: string, leaf: string): void {
  const first = resolve(firstCreated);
  const created: string[] = [];
  for (let dir = resolve(leaf); ; dir = dirname(dir)) {
    created.push(dir);
    if (dir === first || dirname(dir) === dir) break;
  }
  for (const dir of created) {
    try {
      chmodSync(dir, 0o700);
    } catch (e) {
      throw new DataDirError(`cannot restrict ${dir} to mode 0700: ${messageOf(e)}`);
    }
  }
}
