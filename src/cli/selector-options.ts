/**
 * The element options the element commands share (`--text`, `--id`, `--role`, `--name`, `--ref`,
 * and how --text matches) and the selector they make, with contradictions as usage errors.
 */
import type { ElementSelector } from "../protocol/types/ui.ts";
import { CliError, EXIT } from "./output.ts";
import { parseRef } from "./refs.ts";

export { addSelectorOptions } from "./selector-flags.ts";

export interface SelectorOpts {
  text?: string;
  contains?: boolean;
  regex?: boolean;
  ignoreCase?: boolean;
  id?: string;
  role?: string;
  name?: string;
  ref?: string;
}

export interface ElementOpts extends SelectorOpts {
  device?: string;
  json?: boolean;
  timeout?: number;
}

/** What the options name: a selector, or a ref into the last `ui` listing. */
export type Wanted =
  | { kind: "selector"; selector: ElementSelector; label: string }
  | { kind: "ref"; ref: string; label: string };

export const usage = (message: string) => new CliError(message, EXIT.usage);
/** find and wait-for take a selector only (their actions have no node targets), so they have no --ref. */
export const selectorOf = (w: Wanted): ElementSelector | null => (w.kind === "selector" ? w.selector : null);
export const quoted = (s: string) => (/^[\w.:/@-]+$/.test(s) ? s : JSON.stringify(s));
export const ELEMENT_OPTIONS = "--text, --id, --role, --name or --ref";

/** The selector the options make, null when none was given; contradictory options are usage errors. */
export function wantedFrom(o: SelectorOpts): Wanted | null {
  if (o.contains && o.regex) throw usage("--contains and --regex exclude each other");
  for (const [set, flag] of [
    [o.contains, "--contains"],
    [o.regex, "--regex"],
    [o.ignoreCase, "--ignore-case"],
  ] as const)
    if (set && o.text === undefined) throw usage(`${flag} applies to --text; give --text too`);
  const given = (
    [
      ["--text", o.text],
      ["--id", o.id],
      ["--role", o.role],
      ["--name", o.name],
    ] as const
  ).filter(([, v]) => v !== undefined);
  for (const [flag, value] of given)
    if (!/\S/.test(value as string)) throw usage(`${flag} needs a value that is not blank`);
  if (o.ref !== undefined) {
    if (given.length) throw usage("--ref names one element by itself; leave out --text, --id, --role and --name");
    parseRef(o.ref);
    return { kind: "ref", ref: o.ref, label: `--ref ${o.ref}` };
  }
  if (!given.length) return null;
  const mode = o.contains ? "contains" : o.regex ? "regex" : "exact";
  const selector: ElementSelector = {
    context: null,
    role: o.role ?? null,
    name: o.name ?? null,
    value: null,
    identifier: o.id ?? null,
    text: o.text === undefined ? null : { value: o.text, mode, caseSensitive: !o.ignoreCase },
    css: null,
  };
  const label = [
    o.role !== undefined ? `--role ${quoted(o.role)}` : "",
    o.name !== undefined ? `--name ${JSON.stringify(o.name)}` : "",
    o.id !== undefined ? `--id ${quoted(o.id)}` : "",
    o.text !== undefined ? `--text ${JSON.stringify(o.text)}` : "",
    o.contains ? "--contains" : o.regex ? "--regex" : "",
    o.ignoreCase ? "--ignore-case" : "",
  ];
  return { kind: "selector", selector, label: label.filter(Boolean).join(" ") };
}
