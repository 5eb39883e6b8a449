/** The element selector options of tap, type, find and wait-for, declared without loading the code that reads them (selector-options.ts). */
import type { Command } from "commander";

/** Adds the selector options; `--ref` only where the action takes a node reference (tap, type --into). */
export function addSelectorOptions(c: Command, opts: { ref: boolean }): Command {
  c.option(
    "--text <text>",
    "the element whose text is this (exact, case-sensitive unless --contains, --regex, --ignore-case)",
  )
    .option("--contains", "--text matches text containing it")
    .option("--regex", "--text is a regular expression (RE2 syntax)")
    .option("--ignore-case", "--text matches regardless of case")
    .option(
      "--id <identifier>",
      "the element with this identifier (Android: the resource id, with or without its package:id/ part)",
    )
    .option("--role <role>", "the element of this role or class (Button matches android.widget.Button)")
    .option("--name <name>", "the element with this accessible name (Android: content description)");
  if (opts.ref) c.option("--ref <ref>", "an element from the last devicerail ui listing, e.g. @e3");
  return c;
}
