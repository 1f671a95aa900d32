import { describe, expect, it } from "vitest";
import { MIN_SECRET_CHARS, REDACTED, Redactor } from "../../src/log/redact.js";

const SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

describe("issue 14 finding 4: the redactor", () => {
  it("replaces every occurrence of a known value", () => {
    const redactor = Redactor.of([SECRET]);
    expect(redactor.text(`a ${SECRET} b ${SECRET}`)).toBe(`a ${REDACTED} b ${REDACTED}`);
  });

  it("ignores values shorter than the minimum, empty ones and undefined", () => {
    const redactor = Redactor.of(["1234567", "", undefined, "true"]);
    expect(MIN_SECRET_CHARS).toBe(8);
    expect(redactor.active).toBe(false);
    expect(redactor.text("1234567 true")).toBe("1234567 true");
  });

  it("matches the JSON-escaped form inside serialized text", () => {
    const secret = 'pa"ss\\word-1234';
    const redactor = Redactor.of([secret]);
    const json = JSON.stringify({ body: `key ${secret}` });
    expect(redactor.text(json)).not.toContain(JSON.stringify(secret).slice(1, -1));
    expect(JSON.parse(redactor.text(json))).toEqual({ body: `key ${REDACTED}` });
  });

  it("replaces a longer value before one it contains", () => {
    const redactor = Redactor.of(["abcdefgh", "abcdefgh-ijklmnop"]);
    expect(redactor.text("x abcdefgh-ijklmnop y abcdefgh")).toBe(`x ${REDACTED} y ${REDACTED}`);
  });

  it("walks objects and arrays deeply and copies only what changed", () => {
    const redactor = Redactor.of([SECRET]);
    const clean = { a: ["x", { b: "y" }], n: 3 };
    expect(redactor.value(clean)).toBe(clean);
    const dirty = { keep: clean, list: ["ok", { text: `out: ${SECRET}` }] };
    const out = redactor.value(dirty);
    expect(out).toEqual({ keep: clean, list: ["ok", { text: `out: ${REDACTED}` }] });
    expect(out.keep).toBe(clean);
    expect(dirty.list[1]).toEqual({ text: `out: ${SECRET}` });
  });

  it("redacts raw bytes that are not UTF-8", () => {
    const redactor = Redactor.of([SECRET]);
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(SECRET), Buffer.from([0xc0])]);
    const out = Buffer.from(redactor.bytes(bytes));
    expect(out.includes(Buffer.from(SECRET))).toBe(false);
    expect(out.includes(Buffer.from(REDACTED))).toBe(true);
    const clean = Buffer.from("nothing here at all");
    expect(redactor.bytes(clean)).toBe(clean);
  });

  it("matches values with regular-expression characters literally", () => {
    const secret = "a.b*c+d?e(f)[g]{h}|i^j$k\\l/m-n";
    const redactor = Redactor.of([secret]);
    expect(redactor.text(`x ${secret} y`)).toBe(`x ${REDACTED} y`);
    expect(redactor.text("aXb*c+d?e(f)[g]{h}|i^j$k\\l/m-n")).toBe("aXb*c+d?e(f)[g]{h}|i^j$k\\l/m-n");
  });

  it("Redactor.none returns its input untouched", () => {
    const value = { text: SECRET };
    expect(Redactor.none.value(value)).toBe(value);
    expect(Redactor.none.text(SECRET)).toBe(SECRET);
  });
});
