/**
 * Hermes subagent lifecycle API, handles: a genuine handle opens its child; a forged one — bit-flipped,
 * truncated, re-versioned, with keys added or missing, ids changed or swapped, not an object at all, or
 * another parent's genuine handle asked by this parent — is `{state: "UNKNOWN", code: "UNKNOWN_HANDLE"}`
 * from every operation, the same answer whatever is wrong, and changes nothing (a refused cancel records
 * no request). Issue 17 acceptance: 10,000 mutated handles (fast-check), 0 accepted. S1: the children are
 * sessions with a `delegation` record (src/subagents/ledger.ts) in a real SQLite store.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import {
  HANDLE_VERSION,
  issueHandle,
  type SubagentHandle,
  verifyHandle,
} from "../../src/subagents/handles.js";
import { type Delegation, delegationOf } from "../../src/subagents/ledger.js";
import { type ChildDriver, SubagentLifecycle } from "../../src/subagents/lifecycle.js";

const UNKNOWN = { state: "UNKNOWN", code: "UNKNOWN_HANDLE" };
const KEYS = ["version", "childId", "parentId", "correlationId", "capability"] as const;

let store: Store;
let other: Store;
let lifecycle: SubagentLifecycle;
let parentA: string;
let parentB: string;
let childA: string;
let childB: string;
let genuineA: SubagentHandle;
let genuineB: SubagentHandle;
const cancels: string[] = [];

/** The driver records cancels: a refused handle must never reach it. */
const driver: ChildDriver = {
  wake: () => undefined,
  cancel: async (id) => {
    cancels.push(id);
  },
};

async function delegatedChild(parentId: string, correlationId?: string): Promise<string> {
  const delegation: Delegation = {
    parentId,
    depth: 1,
    mode: "spawn",
    task: "look into it",
    via: "api",
    ...(correlationId ? { correlationId } : {}),
  };
  const row = await store.createSession({ parentId, kind: "subagent", metadata: { delegation } });
  return row.id;
}

beforeAll(async () => {
  store = await openStore({ home: mkdtempSync(join(tmpdir(), "bdsh-sa-handles-")) });
  other = await openStore({ home: mkdtempSync(join(tmpdir(), "bdsh-sa-handles-other-")) });
  parentA = (await store.createSession({})).id;
  parentB = (await store.createSession({})).id;
  childA = await delegatedChild(parentA, "review-42");
  childB = await delegatedChild(parentB);
  lifecycle = new SubagentLifecycle(store, driver, { resultRetentionMs: 3_600_000 });
  genuineA = await lifecycle.issue(childA, parentA, "review-42");
  genuineB = await lifecycle.issue(childB, parentB);
});

afterAll(async () => {
  await store?.close();
  await other?.close();
});

/** Every operation's answer for a handle (wait without waiting). */
async function answers(handle: unknown, asker: string | undefined): Promise<unknown[]> {
  return Promise.all([
    lifecycle.status(handle, asker),
    lifecycle.wait(handle, { timeoutMs: 0 }, asker),
    lifecycle.cancel(handle, { reason: "forged" }, asker),
    lifecycle.result(handle, asker),
    lifecycle.reconnect(handle, asker),
  ]);
}

/** The same handle, whatever its key order or an explicit `correlationId: undefined`. */
function sameHandle(value: unknown, genuine: SubagentHandle): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  const keys = Object.keys(v).filter((k) => v[k] !== undefined);
  const own = Object.keys(genuine) as (keyof SubagentHandle)[];
  return keys.length === own.length && own.every((k) => v[k] === genuine[k]);
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** A string that differs from `value`: one character flipped by a bit, cut short, extended, or replaced. */
const changedText = (given: unknown): fc.Arbitrary<string> => {
  const value = typeof given === "string" && given !== "" ? given : "x";
  return fc
    .oneof(
      fc
        .tuple(fc.nat({ max: value.length - 1 }), fc.integer({ min: 0, max: 15 }))
        .map(
          ([at, bit]) =>
            value.slice(0, at) + String.fromCharCode(value.charCodeAt(at) ^ (1 << bit)) + value.slice(at + 1),
        ),
      fc.nat({ max: value.length - 1 }).map((n) => value.slice(0, n)),
      fc.string({ minLength: 1, maxLength: 3 }).map((tail) => value + tail),
      fc.string({ maxLength: 60 }),
      fc.constant(value.toUpperCase()),
      fc.constant(` ${value}`),
    )
    .filter((changed) => changed !== given);
};

/** base64url texts of the capability's exact shape (`v1.` + 43 characters), but not the genuine one. */
const sameShapeCapability = (given: unknown): fc.Arbitrary<string> => {
  const genuine = typeof given === "string" && given.length === 46 ? given : `v1.${"A".repeat(43)}`;
  return fc
    .oneof(
      fc
        .array(fc.constantFrom(...ALPHABET), { minLength: 43, maxLength: 43 })
        .map((chars) => `v1.${chars.join("")}`),
      // One character of the digest replaced by another of the alphabet (the last one's unused bits too).
      fc
        .tuple(fc.nat({ max: 42 }), fc.constantFrom(...ALPHABET))
        .map(([at, c]) => `${genuine.slice(0, 3 + at)}${c}${genuine.slice(4 + at)}`),
      fc.constantFrom("v2.", "V1.", "v0.", "v1-", "").map((prefix) => prefix + genuine.slice(3)),
      // A bit of the decoded digest flipped, encoded again.
      fc.tuple(fc.nat({ max: 31 }), fc.nat({ max: 7 })).map(([at, bit]) => {
        const digest = Buffer.from(genuine.slice(3), "base64url");
        digest[at] = (digest[at] ?? 0) ^ (1 << bit);
        return `v1.${digest.toString("base64url")}`;
      }),
      // The last character's 2 unused bits: the same digest spelled another way.
      fc.integer({ min: 1, max: 3 }).map((bits) => {
        const last = ALPHABET.indexOf(genuine[45] ?? "A");
        return `${genuine.slice(0, 45)}${ALPHABET[last ^ bits]}`;
      }),
    )
    .filter((changed) => changed !== given);
};

type Case = { label: string; handle: unknown; asker: string | undefined };

/** Mutations of one genuine handle, asked by its own parent or by nobody in particular (HTTP). */
function mutationsOf(genuine: SubagentHandle, asker: fc.Arbitrary<string | undefined>): fc.Arbitrary<Case> {
  const base = genuine as unknown as Record<string, unknown>;
  const withField = (key: string, value: fc.Arbitrary<unknown>, label: string) =>
    fc.tuple(value, asker).map(([v, a]) => ({ label, handle: { ...base, [key]: v }, asker: a }));
  return fc.oneof(
    withField("capability", changedText(genuine.capability), "capability bits"),
    withField("capability", sameShapeCapability(genuine.capability), "capability digest"),
    withField("capability", fc.anything(), "capability not a string"),
    withField("childId", changedText(genuine.childId), "child id"),
    withField("parentId", changedText(genuine.parentId), "parent id"),
    withField("childId", fc.constantFrom(parentA, parentB, childA, childB), "child id of another session"),
    withField(
      "correlationId",
      genuine.correlationId === undefined ? fc.string({ minLength: 1 }) : changedText(genuine.correlationId),
      "correlation id",
    ),
    withField(
      "version",
      fc.oneof(
        fc.integer().filter((v) => v !== HANDLE_VERSION),
        fc.double().filter((v) => v !== HANDLE_VERSION),
        fc.constantFrom("1", "v1", null, true, [1], { v: 1 }),
      ),
      "version",
    ),
    fc
      .tuple(
        fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !(KEYS as readonly string[]).includes(k)),
        fc.anything(),
        asker,
      )
      .filter(([k, v]) => !(k in base) && v !== undefined && k !== "__proto__")
      .map(([k, v, a]) => ({ label: "extra key", handle: { ...base, [k]: v }, asker: a })),
    fc.tuple(fc.subarray(Object.keys(base), { minLength: 1 }), asker).map(([drop, a]) => ({
      label: "missing keys",
      handle: Object.fromEntries(Object.entries(base).filter(([k]) => !drop.includes(k))),
      asker: a,
    })),
    asker.map((a) => ({
      label: "child and parent swapped",
      handle: { ...base, childId: genuine.parentId, parentId: genuine.childId },
      asker: a,
    })),
    fc.tuple(fc.anything(), asker).map(([value, a]) => ({ label: "anything", handle: value, asker: a })),
    fc
      .tuple(
        fc.constantFrom<unknown>(
          JSON.stringify(genuine),
          genuine.capability,
          [genuine],
          [genuine.version, genuine.childId, genuine.parentId, genuine.capability],
          { handle: genuine },
          null,
          undefined,
          0,
          Number.NaN,
          () => genuine,
          Symbol("handle"),
          new Map(Object.entries(base)),
        ),
        asker,
      )
      .map(([value, a]) => ({ label: "not a handle", handle: value, asker: a })),
  );
}

/** Built once the handles exist (the parents' ids and capabilities are only known then). */
function arbitraryCase(): fc.Arbitrary<Case> {
  const mutatedA = mutationsOf(genuineA, fc.constantFrom<string | undefined>(parentA, undefined));
  return fc
    .oneof(
      { weight: 6, arbitrary: mutatedA },
      {
        weight: 2,
        arbitrary: mutationsOf(genuineB, fc.constantFrom<string | undefined>(parentB, undefined)),
      },
      // Another parent's genuine handle, asked by this parent (a plugin of parent A holding B's handle).
      {
        weight: 1,
        arbitrary: fc.constant<Case>({ label: "another parent's handle", handle: genuineB, asker: parentA }),
      },
      // Two mutations at once.
      {
        weight: 1,
        arbitrary: mutatedA.chain((first) =>
          typeof first.handle === "object" &&
          first.handle !== null &&
          !Array.isArray(first.handle) &&
          Object.keys(first.handle).length > 0
            ? mutationsOf(first.handle as SubagentHandle, fc.constant(first.asker)).map((second) => ({
                ...second,
                label: `${first.label} + ${second.label}`,
              }))
            : fc.constant(first),
        ),
      },
    )
    .filter((c) => !acceptable(c));
}

/** A mutation that spells a genuine handle again for a parent it belongs to (key order aside) is no forgery. */
function acceptable({ handle, asker }: Case): boolean {
  if (asker !== parentB && sameHandle(handle, genuineA)) return true;
  return asker !== parentA && sameHandle(handle, genuineB);
}

describe("subagent handles (Hermes lifecycle API: unforgeable, UNKNOWN_HANDLE)", () => {
  it("the genuine handle opens its child, after a JSON round trip too, for its own parent", async () => {
    expect(await lifecycle.status(genuineA, parentA)).toEqual({
      state: "PENDING",
      correlationId: "review-42",
    });
    expect(await lifecycle.status(JSON.parse(JSON.stringify(genuineA)), parentA)).toEqual({
      state: "PENDING",
      correlationId: "review-42",
    });
    expect(await lifecycle.status(genuineA)).toEqual({ state: "PENDING", correlationId: "review-42" });
    expect(await lifecycle.status(genuineB, parentB)).toEqual({ state: "PENDING" });
    expect(await lifecycle.reconnect(genuineA, parentA)).toEqual({ state: "PENDING", handle: genuineA });
    // The handle names the child and carries an opaque capability, never the key or any state.
    expect(Object.keys(genuineA).sort()).toEqual([
      "capability",
      "childId",
      "correlationId",
      "parentId",
      "version",
    ]);
    expect(genuineA.capability).toMatch(/^v1\.[A-Za-z0-9_-]{43}$/);
  });

  it("refuses, with one answer, what no genuine handle can be", async () => {
    // Another parent's genuine handle asked by this parent.
    expect(await answers(genuineB, parentA)).toEqual(Array(5).fill(UNKNOWN));
    // Issued by another store (another key).
    const key = await other.harnessKey("subagent-handles");
    expect(await answers(issueHandle(key, childA, parentA, "review-42"), parentA)).toEqual(
      Array(5).fill(UNKNOWN),
    );
    // A correct MAC over a child that is not that parent's (only a holder of the key could make it).
    expect(await answers(await lifecycle.issue(childB, parentA), undefined)).toEqual(Array(5).fill(UNKNOWN));
    // A correct MAC over a session that does not exist: the same answer, nothing about which children exist.
    expect(await answers(await lifecycle.issue("no-such-child", parentA), parentA)).toEqual(
      Array(5).fill(UNKNOWN),
    );
    // Every one of the capability's 4 spellings of the last digest character but its own.
    const cap = genuineA.capability;
    const last = ALPHABET.indexOf(cap[cap.length - 1]!);
    for (let bits = 1; bits < 4; bits++) {
      const spelled = `${cap.slice(0, -1)}${ALPHABET[last ^ bits]}`;
      expect(
        verifyHandle(await store.harnessKey("subagent-handles"), { ...genuineA, capability: spelled }),
      ).toBe(undefined);
    }
  });

  it("10,000 mutated handles: 0 accepted, every answer exactly UNKNOWN/UNKNOWN_HANDLE", async () => {
    let accepted = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(arbitraryCase(), async ({ label, handle, asker }) => {
        runs++;
        const got = await answers(handle, asker);
        if (got.some((a) => JSON.stringify(a) !== JSON.stringify(UNKNOWN))) accepted++;
        expect(got, label).toEqual(Array(5).fill(UNKNOWN));
      }),
      { numRuns: 10_000 },
    );
    expect(accepted).toBe(0);
    expect(runs).toBe(10_000);
    // Nothing changed: no cancel reached the driver or the store, and the genuine handles still open.
    expect(cancels).toEqual([]);
    expect(delegationOf(await store.getSession(childA))?.cancelRequested).toBeUndefined();
    expect(delegationOf(await store.getSession(childB))?.cancelRequested).toBeUndefined();
    expect(await lifecycle.status(genuineA, parentA)).toEqual({
      state: "PENDING",
      correlationId: "review-42",
    });
  });
});
