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

describe("a live stream of deltas (issue 31 finding 6)", () => {
  /** Every way of cutting `text` into chunks of at most `size` characters, pushed through one stream. */
  function streamed(redactor: Redactor, chunks: readonly string[]): { shown: string[]; whole: string } {
    const stream = redactor.stream();
    const shown = chunks.map((chunk) => stream.push(chunk));
    shown.push(stream.flush());
    return { shown, whole: shown.join("") };
  }

  function chunked(text: string, size: number): string[] {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out;
  }

  it("never shows any part of a secret split across chunks, at every chunk size", () => {
    const redactor = Redactor.of([SECRET]);
    const text = `the key is ${SECRET}, and again:${SECRET}. done`;
    for (let size = 1; size <= text.length; size++) {
      const { shown, whole } = streamed(redactor, chunked(text, size));
      expect(whole).toBe(redactor.text(text));
      // No single delta carries a piece of the secret long enough to matter (the held tail is never shown raw).
      for (const delta of shown) expect(delta.includes(SECRET.slice(0, MIN_SECRET_CHARS))).toBe(false);
    }
  });

  it("holds only what could still become a secret, and releases it when it cannot", () => {
    const stream = Redactor.of([SECRET]).stream();
    expect(stream.push("hello wJal")).toBe("hello ");
    expect(stream.push("rX and more")).toBe("wJalrX and more");
    expect(stream.flush()).toBe("");
  });

  it("a value already whole that straddles the cut is shown whole, redacted, not split", () => {
    const redactor = Redactor.of(["abcdefgh-secret", "secret-tail-99"]);
    const stream = redactor.stream();
    const first = stream.push("x abcdefgh-secret-tail-9");
    const rest = stream.push("9 y") + stream.flush();
    expect(first + rest).toBe(redactor.text("x abcdefgh-secret-tail-99 y"));
    expect(first + rest).not.toContain("secret");
  });

  it("flush gives back a held start that never completed", () => {
    const stream = Redactor.of([SECRET]).stream();
    expect(stream.push("ends with wJalrXUt")).toBe("ends with ");
    expect(stream.flush()).toBe("wJalrXUt");
  });

  it("Redactor.none streams everything through at once", () => {
    const stream = Redactor.none.stream();
    expect(stream.push("wJal")).toBe("wJal");
    expect(stream.flush()).toBe("");
  });
});
