import pkg from "../../package.json" with { type: "json" };

/** The name upstream clients see in hello; kept equal to the reference so transcripts compare. */
export const SERVER_NAME = "devicerail-daemon";
export const VERSION: string = pkg.version;
