#!/usr/bin/env bun
// The executable: `devicerail <command>` (commands in ./cli/, the daemon's composition root in
// ./server/). `--version` answers before commander or any command is loaded; every other
// command loads only its own module (./cli/program.ts).
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  const { VERSION } = await import("./server/version.ts");
  console.log(VERSION);
  process.exit(0);
}
const { runCli } = await import("./cli/program.ts");
process.exit(await runCli(argv));
export {};
