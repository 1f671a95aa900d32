/**
 * Same session, any server: the log is the only truth, so a session driven by one `bdsh serve` process and
 * the same session handed between two of them at every turn send the provider the same requests.
 *
 * One scripted goal session — turn 1 (a person's message): `create_goal`, `todo_write`, `read notes.txt`;
 * round 1: `edit notes.txt` without reading it again (only the file observation of turn 1 allows it), then
 * the same `read other.txt` three times (the third result carries the repeat reminder, G1); round 2:
 * `update_goal complete`, then a closing text — runs twice on one PostgreSQL database of its own:
 *
 * - once on one server that is never stopped;
 * - once on two servers, where the first request of every turn makes the test send SIGTERM to the server
 *   driving it (the lease names its process): that server finishes the turn within its grace, starts no new
 *   one (the goal round it queued stays in the inbox), and exits; the other claims the round, and the stopped
 *   one is started again for the next handover.
 *
 * The requests' bodies are compared byte for byte; the only thing masked is the clock (the time context's
 * timestamp and elapsed time, SP5) and the ids the store gives (the session's own temporary directory is
 * named after the session, so it is the same path on every server). Both goals end complete, armed all
 * along (no handover paused or disarmed
 * them: `goal/armed` events say only `create` and `complete`). A SIGKILL mid-turn still disarms the goal as
 * an event: test/server/orphaned-turns.test.ts.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import { type Store, sessionLeaseName } from "../../src/store/store.js";
import { type FakeProvider, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import {
  post,
  type ServeEnv,
  type ServeProcess,
  startServe,
  writeServeConfig,
} from "../chaos/serve-process.js";
import { type FreshDatabase, freshPostgresDatabase } from "../support/fresh-database.js";
import { waitUntil } from "../support/wait.js";

type Message = { role: string; content?: unknown };

let database: FreshDatabase;
let fake: FakeProvider;
let store: Store;
let dir: string;
let env: ServeEnv;
const running = new Set<ServeProcess>();

/** The run under way: where its request bodies go, and whether turns are handed over. */
let current: { bodies: string[]; handover: boolean; handedOver: Set<string>; stopped: number[] } | undefined;

beforeAll(async () => {
  database = await freshPostgresDatabase("anyserver");
  dir = mkdtempSync(join(tmpdir(), "bdsh-any-server-"));
  mkdirSync(join(dir, "ws"));
  const configFile = join(dir, "config.yaml");
  // A long grace: a stopping server finishes its turn (a cancel would change the requests).
  writeServeConfig(configFile, { shutdown_grace_ms: 60_000, lease_ttl_ms: 3_000, sweep_interval_ms: 200 });
  fake = await startFakeProvider({ script: (request) => answer(request) });
  env = {
    databaseUrl: database.url,
    fakeUrl: fake.url,
    home: join(dir, "home"),
    workspace: join(dir, "ws"),
    configFile,
  };
  store = await openStore({ home: env.home, databaseUrl: database.url });
});

afterAll(async () => {
  for (const server of running) server.child.kill("SIGKILL");
  await Promise.all([...running].map((s) => s.exited));
  await store?.close();
  await fake?.close();
  await database?.drop();
});

const notes = () => join(env.workspace, "notes.txt");
const other = () => join(env.workspace, "other.txt");

/** Which turn a request belongs to (its opening message) and how many tool results that turn has so far. */
function position(messages: Message[]): { turn: string; results: number } {
  const text = (m: Message) => (typeof m.content === "string" ? m.content : "");
  let opener = -1;
  let rounds = 0;
  messages.forEach((m, i) => {
    if (m.role !== "user") return;
    if (text(m).includes("SCENARIO")) opener = i;
    if (text(m).startsWith("<goal_round>")) {
      opener = i;
      rounds++;
    }
  });
  const turn = rounds === 0 ? "turn" : `round ${rounds}`;
  return { turn, results: messages.slice(opener + 1).filter((m) => m.role === "tool").length };
}

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  toolCalls: [{ id, name, arguments: args }],
});

async function answer(request: FakeRequest) {
  const messages = (request.body?.messages ?? []) as Message[];
  const { turn, results } = position(messages);
  const run = current;
  run?.bodies.push(request.rawBody);
  if (run?.handover && results === 0 && !run.handedOver.has(turn)) {
    run.handedOver.add(turn);
    run.stopped.push(await stopDriver());
  }
  if (turn === "turn") {
    if (results === 0) return call("t-goal", "create_goal", { objective: "tidy the notes" });
    if (results === 1)
      return call("t-todo", "todo_write", {
        todos: [
          { content: "edit the notes", status: "in_progress" },
          { content: "check the other file", status: "pending" },
        ],
      });
    if (results === 2) return call("t-read", "read", { file_path: notes() });
    return { text: "Started." };
  }
  if (turn === "round 1") {
    if (results === 0)
      return call("r1-edit", "edit", { file_path: notes(), old_string: "alpha", new_string: "beta" });
    if (results <= 3) return call(`r1-read${results}`, "read", { file_path: other() });
    return { text: "Progress." };
  }
  if (results === 0) return call("r2-done", "update_goal", { action: "complete" });
  return { text: "Done." };
}

/** SIGTERM to the process that holds the session's lease (its owner is `<host>:<pid>:<random>`). */
async function stopDriver(): Promise<number> {
  const sessions = await store.listSessions({ limit: 10 });
  for (const session of sessions) {
    const lease = await store.getLease(sessionLeaseName(session.id));
    const pid = Number(lease?.owner?.split(":")[1]);
    const server = [...running].find((s) => s.child.pid === pid);
    if (server) {
      server.child.kill("SIGTERM");
      return pid;
    }
  }
  throw new Error("no server holds the session's lease");
}

/** Starts a server and, while `restart()` says so, starts it again each time it exits. */
async function serve(restart: () => boolean): Promise<void> {
  const server = await startServe(env);
  running.add(server);
  void server.exited.then(async () => {
    running.delete(server);
    if (restart()) await serve(restart);
  });
}

/** Runs the scenario to its end; the bodies sent to the provider, in order. */
async function scenario(
  servers: number,
  handover: boolean,
): Promise<{ id: string; bodies: string[]; stopped: number[] }> {
  writeFileSync(notes(), "alpha\n");
  writeFileSync(other(), "other\n");
  const run = { bodies: [] as string[], handover, handedOver: new Set<string>(), stopped: [] as number[] };
  current = run;
  let ended = false;
  for (let i = 0; i < servers; i++) await serve(() => !ended);
  const first = [...running][0]!;
  const session = await post(`${first.url}/v1/sessions`, { title: "any server" });
  const id = String(session.id);
  await post(`${first.url}/v1/sessions/${id}/messages`, { text: "SCENARIO tidy the notes, please" });
  try {
    await waitUntil(
      async () => {
        const events = await store.read(id);
        const last = events.at(-1);
        const goal = await store.planning.getGoal(id);
        return (
          goal?.phase === "complete" &&
          last?.type === "agent/status" &&
          last.data.status === "idle" &&
          (await store.pendingInbox(id)).length === 0
        );
      },
      "the goal completed and the session idle",
      { timeoutMs: 120_000, everyMs: 100 },
    );
  } finally {
    ended = true;
    current = undefined;
    for (const server of [...running]) server.child.kill("SIGTERM");
    await Promise.all([...running].map((s) => s.exited));
  }
  return { id, bodies: run.bodies, stopped: run.stopped };
}

/**
 * What two sessions cannot share: the clock (SP5's time context) and the ids the store gives (the session's,
 * in its temporary directory's path, and the goal's). Everything else is the same bytes.
 */
function maskClock(body: string): string {
  return body
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<id>")
    .replace(/(Time sampled while preparing turn \d+, step \d+: )[^\\"]+/g, "$1<time>")
    .replace(/(Elapsed since the previous (?:message you saw|time context): )[^\\".]+/g, "$1<elapsed>");
}

/** Where two lists of bodies first differ (request index and some text around it), for a readable failure. */
function firstDifference(actual: string[], expected: string[]): string | undefined {
  for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
    const a = actual[i] ?? "";
    const b = expected[i] ?? "";
    if (a === b) continue;
    let at = 0;
    while (a[at] === b[at]) at++;
    return `request ${i}, char ${at}: ${JSON.stringify(a.slice(at - 80, at + 160))} vs ${JSON.stringify(b.slice(at - 80, at + 160))}`;
  }
  return undefined;
}

describe("same session, any server (PostgreSQL)", () => {
  it("sends the provider the same requests whether one server drives it or two hand it over at every turn", async () => {
    const alone = await scenario(1, false);
    expect(readFileSync(notes(), "utf8")).toBe("beta\n");
    const handed = await scenario(2, true);
    expect(readFileSync(notes(), "utf8")).toBe("beta\n");

    expect(alone.bodies.length).toBe(11); // turn: 4 requests, round 1: 5, round 2: 2
    expect(firstDifference(handed.bodies.map(maskClock), alone.bodies.map(maskClock))).toBeUndefined();

    for (const { id } of [alone, handed]) {
      const events = await store.read(id);
      const ofType = <K extends LogEvent["type"]>(type: K) =>
        events.filter((e): e is Extract<LogEvent, { type: K }> => e.type === type);
      expect(ofType("turn/end").map((e) => e.data.reason)).toEqual(["completed", "completed", "completed"]);
      expect(ofType("goal/armed").map((e) => e.data)).toEqual([
        { armed: true, reason: "create" },
        { armed: false, reason: "complete" },
      ]);
      expect(ofType("goal/round").map((e) => e.data.round)).toEqual([1, 2]);
      const results = ofType("tool/result");
      expect(results.filter((e) => e.data.isError).map((e) => e.data.callId)).toEqual([]);
      expect(results.find((e) => e.data.callId === "r1-edit")).toBeDefined();
    }
    // Every turn of the handed-over session was driven by a process of its own: each was stopped in turn.
    expect(handed.stopped).toHaveLength(3);
    expect(new Set(handed.stopped).size).toBe(3);
    expect(alone.stopped).toEqual([]);
  });
});
