import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FARM, indexSource, MIGRATIONS_DIR, staleMigrations } from "../../scripts/gen-migrations.ts";
import { ROOT } from "../support/daemon.ts";

describe("gen-migrations --check", () => {
  test("the committed migrations cover tables.ts and index.ts embeds them", () => {
    expect(staleMigrations()).toEqual([]);
    expect(readFileSync(join(MIGRATIONS_DIR, "index.ts"), "utf8")).toBe(indexSource());
  });

  test("a column added to the tables without a migration is reported", () => {
    // Inside node_modules so the copy's drizzle imports resolve; never committed.
    const dir = join(ROOT, "node_modules/.cache/devicerail-migrations-test");
    mkdirSync(dir, { recursive: true });
    const schema = join(dir, "tables.ts");
    try {
      const original = readFileSync(join(ROOT, "src/core/sessions/tables.ts"), "utf8");
      writeFileSync(
        schema,
        original.replace(
          'endedAtMs: integer("ended_at_ms"),',
          'endedAtMs: integer("ended_at_ms"),\n  note: text("note"),',
        ),
      );
      const problems = staleMigrations(schema);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toStartWith("src/core/sessions/tables.ts has changes without a migration");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  test("the farm's PostgreSQL migrations cover its tables, and a change without one is reported", () => {
    expect(staleMigrations(undefined, FARM)).toEqual([]);
    expect(readFileSync(join(FARM.dir, "index.ts"), "utf8")).toBe(indexSource(FARM.dir, FARM));
    const dir = join(ROOT, "node_modules/.cache/devicerail-farm-migrations-test");
    mkdirSync(dir, { recursive: true });
    const schema = join(dir, "tables.ts");
    try {
      const original = readFileSync(join(ROOT, FARM.tables), "utf8");
      writeFileSync(
        schema,
        original.replace('name: text("name").notNull(),', 'name: text("name").notNull(),\n  rack: text("rack"),'),
      );
      const problems = staleMigrations(schema, FARM);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toStartWith("src/farm/tables.ts has changes without a migration");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
