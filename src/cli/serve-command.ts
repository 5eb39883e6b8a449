/**
 * `devicerail serve`: the plan (server/serve-plan.ts), then either a relay of stdio to the data
 * directory's running daemon (stdio-relay.ts) or the daemon itself (server/serve.ts, loaded only
 * then). This file is the command's terminal: it says what went wrong and picks the exit code.
 */
import { homedir } from "node:os";
import { resolveDataPaths } from "../server/data-dir.ts";
import { type ServeOptions, ServeUsageError, planServe } from "../server/serve-plan.ts";
import { EXIT } from "./output.ts";
import { SERVE_HELP } from "./serve-help.ts";
import { stderr, stdout } from "./std-streams.ts";
import { relayStdio } from "./stdio-relay.ts";

const say = (text: string) => stderr.write(`devicerail: ${text}\n`);

export async function serve(opts: ServeOptions): Promise<number> {
  // Before planServe removes the token from the environment: a relay may need it.
  const env = { ...process.env };
  let planned: ReturnType<typeof planServe>;
  try {
    planned = planServe(opts, say);
  } catch (err) {
    if (!(err instanceof ServeUsageError)) throw err;
    say(err.showHelp ? `${err.message}\n\n${SERVE_HELP}` : err.message);
    return EXIT.usage;
  }
  // One daemon per data directory: while it runs, stdio is relayed to it.
  if (!planned.listen && !planned.socket) {
    const relayed = await relayStdio(resolveDataPaths(env, process.platform, homedir(), process.cwd()).dataDir, env);
    if (relayed !== null) return relayed;
  }
  // The daemon's code is loaded only now: a relay never needs it.
  const { runServer } = await import("../server/serve.ts");
  const outcome = await runServer(planned, {
    say,
    listening: (where) => stdout.write(`${JSON.stringify({ listening: where })}\n`),
  });
  return outcome === "served" ? EXIT.ok : outcome === "usage" ? EXIT.usage : EXIT.runtime;
}
