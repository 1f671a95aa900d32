import { describe, expect, it } from "vitest";
import { StatementCombiner } from "../../src/store/statement-combiner.js";

type Write = { key: string; value: string; bytes?: number };

/** A combiner whose statements stay out until the test lets them go, recording each batch sent. */
function gated(options: { inFlight?: number; maxWrites?: number; maxBytes?: number } = {}) {
  const batches: string[][] = [];
  const gates: Array<() => void> = [];
  const combiner = new StatementCombiner<Write, string>({
    inFlight: options.inFlight ?? 1,
    maxWrites: options.maxWrites ?? 100,
    maxBytes: options.maxBytes ?? 1_000_000,
    async run(batch) {
      batches.push(batch.map((w) => w.value));
      await new Promise<void>((resolve) => gates.push(resolve));
      return batch.map((w) =>
        w.value.startsWith("bad")
          ? { status: "rejected" as const, reason: new Error(`refused ${w.value}`) }
          : { status: "fulfilled" as const, value: `stored ${w.value}` },
      );
    },
  });
  const submit = (key: string, value: string, bytes = 1) =>
    combiner.submit({ key, value, bytes }, key, bytes);
  /** Lets the oldest statement out come back, then lets the combiner send what waits. */
  const release = async () => {
    gates.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { combiner, batches, submit, release, settle, out: () => gates.length };
}

describe("StatementCombiner (group commit)", () => {
  it("sends a write made alone by itself, at once", async () => {
    const c = gated();
    const stored = c.submit("s1", "a");
    await c.settle();
    expect(c.batches).toEqual([["a"]]);
    await c.release();
    expect(await stored).toBe("stored a");
  });

  it("sends the writes of one tick together, and what arrives while statements are out in the next one", async () => {
    const c = gated({ inFlight: 1 });
    const first = [c.submit("s1", "a"), c.submit("s2", "b")];
    await c.settle();
    expect(c.batches).toEqual([["a", "b"]]);
    const later = [c.submit("s3", "c"), c.submit("s4", "d")];
    await c.settle();
    const more = c.submit("s5", "e");
    await c.settle();
    expect(c.batches).toHaveLength(1); // one statement out: the rest wait
    await c.release();
    expect(c.batches).toEqual([
      ["a", "b"],
      ["c", "d", "e"],
    ]);
    await c.release();
    expect(await Promise.all([...first, ...later, more])).toEqual(
      ["a", "b", "c", "d", "e"].map((v) => `stored ${v}`),
    );
  });

  it("keeps up to inFlight statements out at once", async () => {
    const c = gated({ inFlight: 2 });
    c.submit("s1", "a");
    await c.settle();
    c.submit("s2", "b");
    await c.settle();
    c.submit("s3", "c");
    c.submit("s4", "d");
    await c.settle();
    expect(c.batches).toEqual([["a"], ["b"]]);
    expect(c.out()).toBe(2);
    await c.release();
    expect(c.batches).toEqual([["a"], ["b"], ["c", "d"]]);
    await c.release();
    await c.release();
  });

  it("never puts two writes of one key in a statement, nor sends one while another of its key is out", async () => {
    const c = gated({ inFlight: 2 });
    const all = [c.submit("s1", "a1"), c.submit("s1", "a2"), c.submit("s2", "b1"), c.submit("s1", "a3")];
    await c.settle();
    // a2 waits for a1; b1 joins a1; the second slot stays free, for s1 is out.
    expect(c.batches).toEqual([["a1", "b1"]]);
    expect(c.out()).toBe(1);
    await c.release();
    expect(c.batches).toEqual([["a1", "b1"], ["a2"]]);
    await c.release();
    expect(c.batches).toEqual([["a1", "b1"], ["a2"], ["a3"]]);
    await c.release();
    expect(await Promise.all(all)).toEqual(["a1", "a2", "b1", "a3"].map((v) => `stored ${v}`));
  });

  it("caps a statement by writes and by bytes; a write larger than the byte cap still goes, alone", async () => {
    const c = gated({ inFlight: 1, maxWrites: 2, maxBytes: 10 });
    c.submit("s1", "a", 4);
    c.submit("s2", "b", 4);
    c.submit("s3", "c", 4);
    c.submit("s4", "huge", 50);
    c.submit("s5", "d", 1);
    await c.settle();
    expect(c.batches).toEqual([["a", "b"]]);
    await c.release();
    expect(c.batches.at(-1)).toEqual(["c", "d"]); // "huge" does not fit beside c; d does
    await c.release();
    expect(c.batches.at(-1)).toEqual(["huge"]);
    await c.release();
  });

  it("answers each write by its own result: one refused write fails alone", async () => {
    const c = gated();
    const answers = Promise.allSettled([c.submit("s1", "a"), c.submit("s2", "bad-b")]);
    await c.settle();
    await c.release();
    const [good, bad] = await answers;
    expect(good).toEqual({ status: "fulfilled", value: "stored a" });
    expect(bad.status === "rejected" && String(bad.reason)).toBe("Error: refused bad-b");
  });

  it("fails every write of a statement that fails as a whole, and goes on with the next", async () => {
    let calls = 0;
    const combiner = new StatementCombiner<Write, string>({
      inFlight: 1,
      maxWrites: 10,
      maxBytes: 100,
      async run(batch) {
        calls++;
        if (calls === 1) throw new Error("connection lost");
        return batch.map((w) => ({ status: "fulfilled" as const, value: w.value }));
      },
    });
    const first = await Promise.allSettled([
      combiner.submit({ key: "a", value: "a" }, "a", 1),
      combiner.submit({ key: "b", value: "b" }, "b", 1),
    ]);
    expect(first.map((r) => r.status === "rejected" && String(r.reason))).toEqual([
      "Error: connection lost",
      "Error: connection lost",
    ]);
    expect(calls).toBe(1); // both went in one statement
    expect(await combiner.submit({ key: "a", value: "again" }, "a", 1)).toBe("again");
  });

  it("is idle only once every write made so far has its answer", async () => {
    const c = gated({ inFlight: 1 });
    const answered: string[] = [];
    for (const [key, value] of [
      ["s1", "a"],
      ["s2", "b"],
      ["s1", "a2"],
    ] as const)
      void c.submit(key, value).then((v) => answered.push(v));
    let idle = false;
    const waiting = c.combiner.idle().then(() => {
      idle = true;
    });
    await c.settle();
    await c.release();
    expect(idle).toBe(false); // a2 is still to go
    await c.release();
    await waiting;
    expect(answered).toEqual(["stored a", "stored b", "stored a2"]);
    await c.combiner.idle(); // and at once when nothing is left
  });
});
