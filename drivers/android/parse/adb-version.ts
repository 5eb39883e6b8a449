/**
 * Which adb protocol an adb client and a server speak. `adb version` prints
 * "Android Debug Bridge version 1.0.41" first (its ADB_VERSION_MAJOR.MINOR.ADB_SERVER_VERSION);
 * the server answers `host:version` with ADB_SERVER_VERSION as four hex digits. A client whose
 * number differs from the running server's kills that server and starts its own ("adb server
 * version (40) doesn't match this client (41); killing..."), so two adbs of different versions
 * on one machine keep replacing each other's server.
 */

/** The server version `adb version` reports (41 for 1.0.41); null when the text is not adb's. */
export function parseAdbClientVersion(out: string): number | null {
  const m = /^Android Debug Bridge version \d+\.\d+\.(\d+)\r?$/m.exec(out);
  return m ? Number(m[1]) : null;
}
