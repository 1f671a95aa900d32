/**
 * Spill quotas: one step of ten commands, each printing far more than a result may keep, once grew the
 * database by 673 MB. A blob over the per-result quota keeps its ends around a marker; the session's blobs
 * stop at the per-session quota; every result says what was dropped. On SQLite and PostgreSQL.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { droppedNotice, quotaBlobStore, SpillQuotaError } from "../../src/tools/spill/spill-quota.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";
import { openTestAgent } from "../support/test-agent.js";

const KB = 1024;

const STORES: Array<[string, (home: string) => Promise<Store>]> = [
  ["sqlite", (home) => openStore({ home })],
  ["postgres", (home) => openStore({ home, databaseUrl: testDatabaseUrl() })],
];

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function freshStore(open: (home: string) => Promise<Store>): Promise<{ store: Store; home: string }> {
  const home = mkdtempSync(join(tmpdir(), "bdsh-quota-"));
  const store = await open(home);
  cleanup.push(() => store.close());
  return { store, home };
}

describe.each(STORES)("spill quotas on %s", (_name, open) => {
  it("keep the beginning and the end of a blob over the per-result quota, and say so", async () => {
    const { store } = await freshStore(open);
    const session = await store.createSession();
    const blobs = quotaBlobStore(store, (id) => store.sessionBlobBytes(id), {
      maxResultBytes: 64 * KB,
      maxSessionBytes: 1024 * KB,
    });
    const text = `BEGIN${"é".repeat(200 * KB)}END`;
    const ref = await blobs.putBlob(session.id, text, { kind: "spill" });
    const stored = (await store.getBlob(ref.id))!.content;
    expect(stored.length).toBeLessThanOrEqual(64 * KB);
    const back = stored.toString("utf8");
    expect(back.startsWith("BEGIN")).toBe(true);
    expect(back.endsWith("END")).toBe(true);
    expect(back).not.toContain("\ufffd"); // no UTF-8 sequence torn at either cut
    const dropped =
      Buffer.byteLength(text) - stored.length + back.match(/\n\n\[\.\.\. .*? \.\.\.\]\n\n/)![0].length;
    expect(back).toContain(
      `[... ${dropped} bytes dropped here by the spill quota (spill.max_result_bytes) ...]`,
    );
    expect(droppedNotice(ref)).toBe(
      `The stored copy keeps the beginning and the end; ${dropped} bytes in the middle were dropped (spill.max_result_bytes).`,
    );
  });

  it("stop a session's blobs at the per-session quota, counting what an earlier process stored", async () => {
    const { store } = await freshStore(open);
    const session = await store.createSession();
    await store.putBlob(session.id, "x".repeat(100 * KB)); // stored before this process's quota existed
    const quota = { maxResultBytes: 64 * KB, maxSessionBytes: 200 * KB };
    const blobs = quotaBlobStore(store, (id) => store.sessionBlobBytes(id), quota);
    // Ten parallel puts of 64 KB race for the 100 KB left: the total never passes the quota.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, () => blobs.putBlob(session.id, "y".repeat(64 * KB))),
    );
    expect(await store.sessionBlobBytes(session.id)).toBeLessThanOrEqual(200 * KB);
    const refused = outcomes.filter((o) => o.status === "rejected");
    expect(refused.length).toBeGreaterThan(0);
    for (const o of refused) expect((o as PromiseRejectedResult).reason).toBeInstanceOf(SpillQuotaError);
    const cut = outcomes.find(
      (o) => o.status === "fulfilled" && o.value.metadata.spillDropped !== undefined,
    ) as PromiseFulfilledResult<{ metadata: Record<string, unknown> }> | undefined;
    expect(cut?.value.metadata.spillDropped).toMatchObject({ setting: "spill.max_session_bytes" });
    // Another session's room is its own.
    const other = await store.createSession();
    await expect(blobs.putBlob(other.id, "z".repeat(10 * KB))).resolves.toMatchObject({ bytes: 10 * KB });
  });

  it("bound one step of ten huge commands, and each result says what was not kept", async () => {
    const { store, home } = await freshStore(open);
    const workspace = mkdtempSync(join(tmpdir(), "bdsh-quota-ws-"));
    const calls = Array.from({ length: 10 }, (_, i) => ({
      id: `c${i}`,
      name: "bash",
      // 2 MB each: far past the 64 KB a result may keep and, together, the 512 KB a session may.
      arguments: {
        description: "print 2 MB",
        command: `head -c 2000000 /dev/zero | tr '\\0' ${"abcdefghij"[i]}`,
      },
    }));
    const fake: FakeProvider = await startFakeProvider({ script: [{ toolCalls: calls }, { text: "done" }] });
    cleanup.push(() => fake.close());
    const config = {
      ...DEFAULT_CONFIG,
      model: { ...DEFAULT_CONFIG.model, base_url: fake.url },
      spill: { ...DEFAULT_CONFIG.spill, max_result_bytes: 64 * KB, max_session_bytes: 512 * KB },
    };
    const opened = await openTestAgent({ store, config, workspace, home, approval: "never" });
    await opened.agent.followup("print a lot");
    await opened.agent.whenIdle();
    await opened.agent.close();

    expect(await store.sessionBlobBytes(opened.session.id)).toBeLessThanOrEqual(512 * KB);
    const results = (await store.read(opened.session.id)).filter(
      (e): e is LogEvent<"tool/result"> => e.type === "tool/result",
    );
    expect(results).toHaveLength(10);
    for (const r of results) {
      expect(r.data.text).toMatch(
        /\[output truncated; full output: (spill:\/\/\S+ \(The stored copy keeps the beginning and the end; \d+ bytes in the middle were dropped \(spill\.max_(result|session)_bytes\)\.\)|unavailable \(this session's spill quota \(spill\.max_session_bytes = 524288\) is used up\))\]/,
      );
    }
    expect(results.some((r) => r.data.text.includes("is used up"))).toBe(true);
  });
});
