import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { OUT_DIR } from "../../scripts/gen-protocol.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * An Ajv holding every generated DTO and method schema, read from disk rather than from generate():
 * what clients validate with is the committed files, and gen --check keeps those current.
 */
export function generatedSchemas(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv.addFormat("uuid", UUID);
  for (const dir of ["schema", "methods"])
    for (const file of readdirSync(join(OUT_DIR, dir))
      .filter((f) => f.endsWith(".json"))
      .sort())
      ajv.addSchema(JSON.parse(readFileSync(join(OUT_DIR, dir, file), "utf8")));
  return ajv;
}
