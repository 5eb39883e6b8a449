import pkg from "../../package.json" with { type: "json" };

/** Stamped by scripts/build.ts (`--define`) into compiled binaries; undefined when run from source. */
declare const DEVICERAIL_VERSION: string | undefined;
declare const DEVICERAIL_COMMIT: string | undefined;

/** The name upstream clients see in hello; kept equal to the reference so transcripts compare. */
export const SERVER_NAME = "devicerail-daemon";
/** The git commit a binary was built from ("unknown" outside a checkout); null from source. */
export const COMMIT: string | null = typeof DEVICERAIL_COMMIT === "string" ? DEVICERAIL_COMMIT : null;
/** The package version, with the commit as semver build metadata in a binary: `0.1.0+abc1234`. */
export const VERSION: string =
  (typeof DEVICERAIL_VERSION === "string" ? DEVICERAIL_VERSION : pkg.version) + (COMMIT ? `+${COMMIT}` : "");
