/**
 * Where the reference's schema and its server disagree (docs/protocol/compatibility.md#empty-protocol-offer, docs/protocol/compatibility.md#blank-verdict-summaries), our generated schema states what
 * the reference's schema states, and the daemon keeps the reference server's typed answers: a client
 * sees the same verdict whichever schema it validates with, and the same error when it sends anyway.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { OUT_DIR, methodSchemaId } from "../../scripts/gen-protocol.ts";
import { HelloParamsSchema } from "../../src/protocol/types/handshake.ts";
import { VerdictRecordParamsSchema } from "../../src/protocol/types/verdict.ts";
import { ROOT, spawnDaemon } from "../support/daemon.ts";
import { generatedSchemas } from "./generated-schemas.ts";

const ajv = generatedSchemas();
const fixture = (path: string) => JSON.parse(readFileSync(join(ROOT, "fixtures/protocol", path), "utf8"));
const generated = (path: string) => JSON.parse(readFileSync(join(OUT_DIR, path), "utf8"));

/** Ajv's verdict on one request, with only the facts that say which rule failed and where. */
function check(method: string, request: unknown) {
  const validate = ajv.getSchema(methodSchemaId(method, "request"));
  if (!validate) throw new Error(`no generated request schema for ${method}`);
  const ok = validate(request) as boolean;
  return { ok, errors: (validate.errors ?? []).map((e) => ({ instancePath: e.instancePath, keyword: e.keyword })) };
}

const EMPTY_OFFER = "system.hello/empty-protocol-offer";
const BLANK_SUMMARY = "verdict.record/blank-summary";

describe("system.hello protocol offer", () => {
  const emptyOffer = fixture(`${EMPTY_OFFER}.request.json`);

  test("requires at least one range when the ProtocolOffer schema is generated", () => {
    expect(generated("schema/protocol-offer.schema.json").properties.ranges).toEqual({
      type: "array",
      items: { $ref: "urn:devicerail:schema:protocol:v1:protocol-range" },
      minItems: 1,
    });
  });

  test("is schema-invalid when ranges is empty", () => {
    expect(emptyOffer.params.protocol).toEqual({ ranges: [] });
    expect(check("system.hello", emptyOffer)).toEqual({
      ok: false,
      errors: [{ instancePath: "/params/protocol/ranges", keyword: "minItems" }],
    });
  });

  test("is schema-valid when ranges holds one range", () => {
    const oneRange = {
      ...emptyOffer,
      params: { ...emptyOffer.params, protocol: { ranges: [{ major: 1, minMinor: 0, maxMinor: 5 }] } },
    };
    expect(check("system.hello", oneRange)).toEqual({ ok: true, errors: [] });
  });

  test("still decodes at run time when ranges is empty", () => {
    expect(v.safeParse(HelloParamsSchema, emptyOffer.params).success).toBe(true);
  });

  test("is answered with the typed emptyProtocolOffer error when the daemon receives ranges empty", async () => {
    await using d = spawnDaemon();
    d.send(emptyOffer);
    expect(await d.next()).toEqual(fixture(`${EMPTY_OFFER}.response.json`));
  });
});

describe("verdict.record summary", () => {
  const blank = fixture(`${BLANK_SUMMARY}.request.json`);
  const withSummary = (summary: string) => ({ ...blank, params: { verdict: { ...blank.params.verdict, summary } } });

  test("carries only the reference's length bounds when the Verdict schema is generated", () => {
    expect(generated("schema/verdict.schema.json").properties.summary).toEqual({
      type: "string",
      minLength: 1,
      maxLength: 16_384,
    });
  });

  test("is schema-valid when the summary is blank", () => {
    expect(blank.params.verdict.summary).toBe(" \t ");
    expect(check("verdict.record", blank)).toEqual({ ok: true, errors: [] });
  });

  test("is schema-invalid when the summary is empty or longer than 16384 code points", () => {
    expect(check("verdict.record", withSummary(""))).toEqual({
      ok: false,
      errors: [{ instancePath: "/params/verdict/summary", keyword: "minLength" }],
    });
    expect(check("verdict.record", withSummary("x".repeat(16_385)))).toEqual({
      ok: false,
      errors: [{ instancePath: "/params/verdict/summary", keyword: "maxLength" }],
    });
    // 16384 astral code points are 32768 UTF-16 units: the bound counts code points, as the daemon does.
    expect(check("verdict.record", withSummary("😀".repeat(16_384)))).toEqual({ ok: true, errors: [] });
  });

  test("still decodes at run time when the summary is blank", () => {
    expect(v.safeParse(VerdictRecordParamsSchema, blank.params).success).toBe(true);
  });

  test("is answered with the typed verdict_bounds error when the daemon receives a blank summary", async () => {
    await using d = spawnDaemon();
    expect((await d.hello()).error).toBeUndefined();
    expect((await d.call("device.connect")).error).toBeUndefined();
    expect((await d.call("session.start")).error).toBeUndefined();
    d.send(blank);
    expect(await d.next()).toEqual(fixture(`${BLANK_SUMMARY}.response.json`));
  });
});
