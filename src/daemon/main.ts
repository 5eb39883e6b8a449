#!/usr/bin/env bun
// The executable: `devicerail <command>`. Commands live in ./cli/; the daemon's composition root is ./server.ts.
import { runCli } from "./cli/program.ts";

const code = await runCli(process.argv.slice(2));
process.exit(code);
