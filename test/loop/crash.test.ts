/**
 * Crash matrix (issue 4 item 9, L9, L17, R1): a real agent process is SIGKILLed at each durable boundary,
 * then a new process opens the session. The history passes the pairing check, the right closing text is
 * there, and no call recorded as started runs twice. Run on SQLite and on PostgreSQL.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { findPairingError } from "../../src/log/pairing.js";
import { surfaceMessagesOf } from "../../src/log/surface.js";
import { NOT_STARTED_TEXT, OUTCOME_UNKNOWN_TEXT } from "../../src/loop/recovery.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, type FakeReply, startFakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";
import { fixtureArgv } from "../support/fixtures.js";

const SCRIPT = fileURLToPath(new URL("./fixtures/crash-agent.ts", import.meta.url));
const never = () => new Promise<FakeReply>(() => undefined);
const toolReply: FakeReply = {
  reasoning: "use the tool",
  toolCalls: [{ id: "call-1", name: "effect", arguments: {} }],
};

const twoCalls: FakeReply = {
  toolCalls: [
    { id: "call-1", name: "effect", arguments: {} },
    { id: "call-2", name: "effect", arguments: { again: true } },
  ],
};

type Boundary = {
  name: string;
  script: (index: number) => FakeReply | Promise<FakeReply>;
  /** When to kill: a MARK line, or a number of requests received by the fake provider. */
  killAt: { mark: string } | { requests: number };
  effects: number;
  closing?: Array<{ code: string; text: string }>;
};

const BOUNDARIES: Boundary[] = [
  { name: "before the request", script: () => never(), killAt: { requests: 1 }, effects: 0 },
  {
    name: "mid-stream",
    script: () => ({ text: "a long answer that never ends", fault: { kind: "stall", afterFrames: 3 } }),
    killAt: { mark: "delta" },
    effects: 0,
  },
  {
    // The reply and the first call's start record are durable; the first call ran, its result was not
    // flushed, and the second call never started.
    name: "after the assistant message, before dispatch",
    script: () => twoCalls,
    killAt: { mark: "classify" },
    effects: 1,
    closing: [
      { code: "TOOL_OUTCOME_UNKNOWN", text: OUTCOME_UNKNOWN_TEXT },
      { code: "TOOL_NOT_STARTED", text: NOT_STARTED_TEXT },
    ],
  },
  {
    name: "mid-tool",
    script: () => toolReply,
    killAt: { mark: "tool-running" },
    effects: 1,
    closing: [{ code: "TOOL_OUTCOME_UNKNOWN", text: OUTCOME_UNKNOWN_TEXT }],
  },
  {
    name: "after the result, before the next step",
    script: (index) => (index === 0 ? toolReply : never()),
    killAt: { requests: 2 },
    effects: 1,
  },
];

const BOUNDARY_IDS: Record<string, string> = {
  "before the request": "before-request",
  "mid-stream": "mid-stream",
  "after the assistant message, before dispatch": "before-dispatch",
  "mid-tool": "mid-tool",
  "after the result, before the next step": "after-result",
};

function startAgent(env: NodeJS.ProcessEnv): {
  child: ChildProcess;
  marks: string[];
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, [...fixtureArgv(SCRIPT)], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const marks: string[] = [];
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n")) if (line.startsWith("MARK ")) marks.push(line.slice(5));
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      if (code && code !== 0) process.stderr.write(stderr);
      resolve(code);
    }),
  );
  return { child, marks, exited };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function effectsOf(file: string): number {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;
}

for (const storeKind of ["sqlite", "postgres"] as const) {
  describe(`R1 crash matrix on ${storeKind}`, () => {
    let fake: FakeProvider;
    beforeAll(async () => {
      fake = await startFakeProvider({ script: [] });
    });
    afterAll(async () => {
      await fake.close();
    });

    for (const boundary of BOUNDARIES) {
      it(`SIGKILL ${boundary.name}: resume closes the turn honestly and runs nothing twice`, async () => {
        const home = mkdtempSync(join(tmpdir(), "bdsh-crash-"));
        const databaseUrl = storeKind === "postgres" ? testDatabaseUrl() : undefined;
        const store: Store = await openStore({ home, ...(databaseUrl ? { databaseUrl } : {}) });
        const session = await store.createSession({ title: boundary.name });
        const effectFile = join(home, "effects.log");
        const base = {
          STORE_HOME: home,
          SESSION_ID: session.id,
          FAKE_URL: fake.url,
          EFFECT_FILE: effectFile,
          BOUNDARY: BOUNDARY_IDS[boundary.name]!,
          ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
        };
        const offset = fake.requests.length;
        fake.setScript((_request, index) => boundary.script(index - offset));

        const victim = startAgent({ ...base, MODE: "run" });
        const killAt = boundary.killAt;
        if ("mark" in killAt) await until(() => victim.marks.includes(killAt.mark), `MARK ${killAt.mark}`);
        else
          await until(() => fake.requests.length - offset >= killAt.requests, `${killAt.requests} requests`);
        victim.child.kill("SIGKILL");
        await victim.exited;

        const resumer = startAgent({ ...base, MODE: "resume" });
        expect(await resumer.exited).toBe(0);
        const events = await store.read(session.id);
        expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
        const ends = events.filter((e): e is LogEvent<"turn/end"> => e.type === "turn/end");
        expect(ends.map((e) => e.data.reason)).toEqual(["interrupted"]);
        const synthetic = events.filter(
          (e): e is LogEvent<"tool/result"> => e.type === "tool/result" && !!e.data.synthetic,
        );
        if (boundary.closing) {
          expect(synthetic.map((e) => [e.data.code, e.data.text])).toEqual(
            boundary.closing.map((c) => [c.code, c.text]),
          );
        } else {
          expect(synthetic).toEqual([]);
        }
        expect(effectsOf(effectFile)).toBe(boundary.effects);

        // New input continues the session from the repaired log; the interrupted call is not re-run.
        const requestsBefore = fake.requests.length;
        fake.setScript(() => ({ text: "picked up again" }));
        const next = startAgent({ ...base, MODE: "resume", PROMPT: "carry on" });
        expect(await next.exited).toBe(0);
        const after = await store.read(session.id);
        expect(
          after.filter((e) => e.type === "turn/end").map((e) => (e as LogEvent<"turn/end">).data.reason),
        ).toEqual(["interrupted", "completed"]);
        expect(findPairingError(surfaceMessagesOf(after))).toBeUndefined();
        expect(fake.requests.length).toBe(requestsBefore + 1);
        expect(effectsOf(effectFile)).toBe(boundary.effects);
        await store.close();
      });
    }
  });
}
