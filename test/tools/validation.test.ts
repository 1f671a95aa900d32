import { describe, expect, it } from "vitest";
import { parseToolArguments } from "../../src/tools/arguments.js";
import { invalidArgumentsText, validateArguments } from "../../src/tools/schema-validator.js";
import type { JsonSchema } from "../../src/tools/types.js";

const schema: JsonSchema = {
  type: "object",
  properties: {
    x: { type: "string" },
    y: { type: "string" },
    mode: { type: "string", enum: ["a", "b"] },
    n: { type: "integer", minimum: 1 },
    todos: {
      type: "array",
      items: { type: "object", properties: { content: { type: "string" } }, required: ["content"] },
    },
    pick: { oneOf: [{ type: "string" }, { type: "number" }] },
    both: { oneOf: [{ type: "number" }, { type: "integer" }] },
  },
  required: ["x"],
  additionalProperties: false,
};

describe("T3 invalid arguments", () => {
  it("words missing properties and wrong types as the seed does", () => {
    expect(invalidArgumentsText(validateArguments(schema, { y: 3 }))).toBe(
      'Error: invalid arguments: missing required property "x"; "y" must be a string',
    );
  });

  it("lists enum options", () => {
    expect(validateArguments(schema, { x: "", mode: "c" })).toEqual(['"mode" must be one of ["a", "b"]']);
  });

  it("rejects undeclared properties under additionalProperties: false", () => {
    expect(validateArguments(schema, { x: "", extra: 1 })).toEqual([
      '"extra" is not a declared property (additionalProperties: false)',
    ]);
  });

  it("counts oneOf branches", () => {
    expect(validateArguments(schema, { x: "", pick: true })).toEqual([
      '"pick" must match exactly one oneOf branch (matched 0)',
    ]);
    expect(validateArguments(schema, { x: "", both: 2 })).toEqual([
      '"both" must match exactly one oneOf branch (matched 2)',
    ]);
  });

  it("names nested paths", () => {
    expect(validateArguments(schema, { x: "", todos: [{ content: "a" }, {}] })).toEqual([
      'missing required property "todos[1].content"',
    ]);
  });

  it("distinguishes integers from numbers and checks bounds", () => {
    expect(validateArguments(schema, { x: "", n: 1.5 })).toEqual(['"n" must be an integer']);
    expect(validateArguments(schema, { x: "", n: 0 })).toEqual(['"n" must be >= 1']);
  });
});

describe("M15 argument parsing", () => {
  it("freezes parsed objects deeply", () => {
    const args = parseToolArguments('{"a":{"b":[1]}}');
    expect(Object.isFrozen(args)).toBe(true);
    expect(Object.isFrozen((args as { a: object }).a)).toBe(true);
  });

  it("treats an empty string as no arguments", () => {
    expect(parseToolArguments("")).toEqual({});
  });

  it("returns undefined for anything that is not an object", () => {
    for (const raw of ["[1]", "null", "3", '"s"', "{bad"]) expect(parseToolArguments(raw)).toBeUndefined();
  });
});
