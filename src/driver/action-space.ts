import { issueDetails } from "../protocol/issue-details.ts";
import { isObject } from "../protocol/schema-words.ts";
import type { ActionDefinition } from "../protocol/types/action.ts";
import type { Protection } from "./driver.ts";
import { DriverError, invalidArguments } from "./driver-error.ts";

/**
 * What an action space needs of a schema: Standard Schema's validate (https://standardschema.dev),
 * which valibot's schemas implement. Typed structurally so that src/driver names no library.
 */
export interface ArgumentsSchema<Out> {
  readonly "~standard": {
    validate(
      value: unknown,
    ):
      | { readonly value: Out; readonly issues?: undefined }
      | { readonly issues: readonly unknown[] }
      | Promise<unknown>;
  };
}

/**
 * One driver action, declared once: scripts/gen-protocol.ts derives the advertised JSON Schema from
 * `arguments` (a valibot object schema), and calls are validated with that same schema.
 */
export interface ActionContract<Name extends string = string, Args = unknown> {
  readonly name: Name;
  readonly description: string;
  /** Omitted for standard actions: the wire writes `protection` only when protected (docs/protocol/devices-and-actions.md#capabilities). */
  readonly protection?: Protection;
  readonly arguments: ArgumentsSchema<Args>;
}

/** A call whose arguments passed its action's schema, narrowed by `name`. */
export type ParsedCall<C extends ActionContract> =
  C extends ActionContract<infer N, infer A> ? { readonly name: N; readonly args: A } : never;

/** The documents the generator wrote for one driver: action name → its arguments' JSON Schema. */
export interface ActionDocuments {
  readonly actions: Readonly<Record<string, object>>;
}

/**
 * A driver's actions: the definitions it advertises (each contract with its generated document)
 * and the one validation of calls against them.
 */
export class ActionSpace<C extends ActionContract> {
  readonly definitions: readonly ActionDefinition[];
  private readonly byName: ReadonlyMap<string, C>;

  constructor(
    readonly contracts: readonly C[],
    private readonly documents: ActionDocuments,
  ) {
    this.byName = new Map(contracts.map((c) => [c.name, c]));
    this.definitions = contracts.map((c) => {
      const inputSchema = documents.actions[c.name];
      if (!inputSchema) throw new Error(`action ${c.name} has no generated schema: run \`bun run gen\``);
      return {
        name: c.name,
        description: c.description,
        inputSchema,
        ...(c.protection ? { protection: c.protection } : {}),
      };
    });
  }

  /** The same documents for the contracts `keep` selects, in their order (a backend that lacks some). */
  only(keep: (c: C) => boolean): ActionSpace<C> {
    return new ActionSpace(this.contracts.filter(keep), this.documents);
  }

  classify(name: string): Protection | undefined {
    const c = this.byName.get(name);
    return c ? (c.protection ?? "standard") : undefined;
  }

  /**
   * The typed arguments of a call. Fails with unknown_action for a name outside the space and with
   * invalid_arguments saying where and what the schema wanted when it refuses them; the values of a
   * protected action are described by type and length only, as they may be secrets. An array is
   * refused before the schema, which would read it as an object.
   */
  parse(name: string, args: unknown): ParsedCall<C> {
    const c = this.byName.get(name);
    if (!c) throw new DriverError("unknown_action", { action: name });
    const redact = (c.protection ?? "standard") !== "standard";
    if (!isObject(args)) throw invalidArguments(name, issueDetails(c.arguments, args, [], { redact }));
    const result = c.arguments["~standard"].validate(args);
    if (result instanceof Promise) throw new Error(`action ${name} has an asynchronous arguments schema`);
    if (result.issues) throw invalidArguments(name, issueDetails(c.arguments, args, result.issues, { redact }));
    return { name, args: (result as { value: unknown }).value } as ParsedCall<C>;
  }
}
