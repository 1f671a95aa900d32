/**
 * Issue 8 item 6, the chaos test: 3 real `bdsh serve` processes on one real PostgreSQL database, 90
 * sessions (30 per server) each running a multi-step `bash` task against the fake provider, while every
 * few seconds one server is SIGKILLed and restarted. Once mid-run every connection to the database is
 * terminated (`pg_terminate_backend`; a real PostgreSQL restart would disturb other tests sharing the
 * server): the listeners reconnect and no server crashes.
 *
 * The client acts as a user: a session whose turn was cut by a kill (R1 closes it; the harness does not
 * auto-continue) gets a "continue" follow-up. At the end every session completed, every log passes the
 * pairing check, seqs are dense, no recorded-started call ran twice, and every message sent was delivered.
 *
 * CI size by default (3 servers × 10 sessions, bounded under 2 minutes); `BDSH_CHAOS_LONG=1` runs the
 * issue's full size (3 × 30 sessions, 6 steps each). `BDSH_CHAOS_PG_RESTART=1` with the long run really
 * restarts the machine's PostgreSQL mid-run (`pg_ctlcluster … restart`, as root) instead of cutting its
 * connections: run it alone, since every other database user on the machine sees the restart too.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { findPairingError } from "../../src/log/pairing.js";
import { surfaceMessagesOf } from "../../src/log/surface.js";
import { openStore } from "../../src/store/open-store.js";
import { type Store, sessionLeaseName } from "../../src/store/store.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { guard } from "../support/wait.js";
import {
  effectsPath,
  FINAL_TEXT,
  post,
  type ServeProcess,
  startServe,
  taskScript,
  writeServeConfig,
} from "./serve-process.js";

const LONG = process.env.BDSH_CHAOS_LONG === "1";
const PG_RESTART = LONG && process.env.BDSH_CHAOS_PG_RESTART === "1";

/** A real restart of the local cluster (Debian's `pg_ctlcluster`; fast shutdown, then start). */
async function restartPostgres(): Promise<void> {
  const version = readdirSync("/etc/postgresql")[0];
  if (!version) throw new Error("no PostgreSQL cluster under /etc/postgresql");
  await promisify(execFile)("pg_ctlcluster", [
    "--skip-systemctl-redirect",
    version,
    "main",
    "restart",
    "-m",
    "fast",
  ]);
}
const SERVERS = 3;
/** The issue asks 3 × 30; the CI size is 3 × 10 to stay under 2 minutes on a 2-core machine. */
const SESSIONS = LONG ? 90 : 30;
const STEPS = LONG ? 6 : 4;
const KILL_EVERY_MS = LONG ? 2_000 : 1_500;
/** Model latency per reply (frames × delay), so kills land mid-turn. */
const FRAME_DELAY_MS = 40;
const DEADLINE_MS = guard(LONG ? 600_000 : 75_000);

let adminUrl: string;
let databaseUrl: string;
let dbName: string;
let dir: string;
let fake: FakeProvider;
let store: Store;

beforeAll(async () => {
  adminUrl = inject("adminUrl");
  dbName = `bdsh_chaos_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`); // its own database: other tests' sessions are not ours
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  databaseUrl = url.toString();
  dir = mkdtempSync(join(tmpdir(), "bdsh-chaos-"));
  // BDSH_HOME and the workspace side by side: the sandbox hides BDSH_HOME from commands (issue 14).
  mkdirSync(join(dir, "ws"));
  mkdirSync(join(dir, "home"));
  fake = await startFakeProvider({ script: taskScript(effectsPath(join(dir, "ws")), STEPS, FRAME_DELAY_MS) });
  store = await openStore({ home: join(dir, "home"), databaseUrl });
});

afterAll(async () => {
  await store?.close();
  await fake?.close();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
});

function finished(events: readonly LogEvent[]): boolean {
  const end = events.findLast((e) => e.type === "turn/end");
  if (
    end?.type !== "turn/end" ||
    end.data.reason !== "completed" ||
    end !== events.findLast((e) => e.type.startsWith("turn/"))
  )
    return false;
  const reply = events.findLast((e) => e.type === "assistant/message");
  return (
    reply?.type === "assistant/message" &&
    reply.data.blocks.some((b) => b.type === "text" && b.text === FINAL_TEXT)
  );
}

describe("issue 8 chaos: servers die at any moment", () => {
  it(
    "completes every session with clean logs while servers are SIGKILLed and connections are cut",
    async () => {
      const configFile = join(dir, "config.yaml");
      writeServeConfig(configFile, { lease_ttl_ms: 1_500, sweep_interval_ms: 300, shutdown_grace_ms: 0 });
      const env = {
        databaseUrl,
        fakeUrl: fake.url,
        home: join(dir, "home"),
        workspace: join(dir, "ws"),
        configFile,
      };
      const servers: Array<ServeProcess | undefined> = await Promise.all(
        Array.from({ length: SERVERS }, () => startServe(env)),
      );
      const live = () => servers.filter((s): s is ServeProcess => s !== undefined);
      const sent = new Map<string, string[]>(); // session → inbox ids we queued
      const pick = () => {
        const up = live();
        return up[Math.floor(Math.random() * up.length)];
      };
      /** A request to any live server, retried on another when its server was just killed. */
      const postAny = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
        for (let attempt = 0; ; attempt++) {
          const server = pick();
          try {
            if (!server) throw new Error("no live server");
            return await post(`${server.url}${path}`, body);
          } catch (error) {
            if (attempt > 200) throw error;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      };
      const ids: string[] = [];
      const creating = (async () => {
        for (let i = 0; i < SESSIONS; i++) {
          const session = await postAny("/v1/sessions", { title: `chaos ${i}` });
          const id = String(session.id);
          sent.set(id, []);
          ids.push(id);
          const message = await postAny(`/v1/sessions/${id}/messages`, { text: `TASK:k${i} run the steps` });
          sent.get(id)!.push(String(message.id));
        }
      })();
      const started = Date.now();
      const done = new Set<string>();
      let kills = 0;
      let terminated = false;
      let nextKill = Date.now() + KILL_EVERY_MS;
      // Kills are driven by progress (requests the fake provider has answered) as well as by time, on a timer
      // of their own, so a slow polling loop on a loaded machine cannot skip them.
      const expectedRequests = SESSIONS * (STEPS + 1);
      const milestones = [0.15, 0.4, 0.65].map((share) => Math.floor(expectedRequests * share));
      let killing = false;
      const maybeKill = async () => {
        if (killing || live().length !== SERVERS) return;
        const dueByProgress = milestones.length > 0 && fake.requests.length >= milestones[0]!;
        if (!dueByProgress && Date.now() < nextKill) return;
        if (dueByProgress) milestones.shift();
        killing = true;
        try {
          // One server down at a time: a restart (tsx start-up) can outlast the kill interval on 2 cores.
          nextKill = Date.now() + KILL_EVERY_MS;
          const index = kills++ % SERVERS;
          const victim = servers[index];
          servers[index] = undefined;
          victim?.child.kill("SIGKILL");
          void victim?.exited.then(async () => {
            servers[index] = await startServe(env);
          });
          if (!terminated && kills === 2 && PG_RESTART) {
            terminated = true;
            await restartPostgres();
            console.info("chaos: PostgreSQL restarted");
          } else if (!terminated && kills === 2) {
            terminated = true;
            const admin = new pg.Client({ connectionString: adminUrl });
            await admin.connect();
            await admin.query(
              "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
              [dbName],
            );
            await admin.end();
          }
        } finally {
          killing = false;
        }
      };
      const killer = setInterval(() => void maybeKill(), 100);
      try {
        while ((ids.length < SESSIONS || done.size < SESSIONS) && Date.now() - started < DEADLINE_MS) {
          for (const id of ids) {
            if (done.has(id)) continue;
            const holder = await store.getLease(sessionLeaseName(id)).catch(() => ({}));
            if (holder) continue; // a server drives it now
            const events = await store.read(id).catch(() => undefined);
            if (!events) continue;
            if (finished(events)) {
              done.add(id);
              continue;
            }
            // A turn cut by a kill was closed (R1) or is still open under a lapsed lease: the user continues.
            const pending = await store.pendingInbox(id).catch(() => [{}]);
            const lease = await store.getLease(sessionLeaseName(id)).catch(() => ({}));
            const last = events.findLast((e) => e.type.startsWith("turn/"));
            if (pending.length === 0 && !lease && last !== undefined) {
              const server = live()[Math.floor(Math.random() * live().length)];
              if (!server) continue;
              const message = await post(`${server.url}/v1/sessions/${id}/messages`, {
                text: "continue",
              }).catch(() => undefined);
              if (message) sent.get(id)!.push(String(message.id));
            }
          }
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      } finally {
        clearInterval(killer);
      }

      await creating;
      console.info(`chaos: ${SESSIONS} sessions done in ${Date.now() - started} ms with ${kills} kills`);
      while (live().length < SERVERS) await new Promise((resolve) => setTimeout(resolve, 100));
      // Every server still alive (none crashed when its connections were cut), and each stops cleanly.
      for (const server of live()) expect(server.child.exitCode).toBeNull();
      for (const server of live()) server.child.kill("SIGTERM");
      const codes = await Promise.all(live().map((s) => s.exited));
      expect(codes.every((code) => code === 0)).toBe(true);

      expect(kills).toBeGreaterThanOrEqual(2);
      for (const id of ids.filter((i) => !done.has(i))) {
        const events = await store.read(id);
        console.info(
          `unfinished ${id}`,
          await store.pendingInbox(id),
          await store.getLease(sessionLeaseName(id)),
        );
        for (const e of events.slice(-8)) console.info(e.seq, e.type, JSON.stringify(e.data).slice(0, 200));
      }
      expect(done.size).toBe(SESSIONS);
      const effects = existsSync(effectsPath(join(dir, "ws")))
        ? readFileSync(effectsPath(join(dir, "ws")), "utf8")
            .split("\n")
            .filter(Boolean)
        : [];
      const counts = new Map<string, number>();
      for (const line of effects) counts.set(line, (counts.get(line) ?? 0) + 1);
      expect([...counts].filter(([, n]) => n > 1)).toEqual([]); // no call ran twice
      for (const id of ids) {
        const events = await store.read(id);
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1)); // dense, no duplicates
        expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
        const delivered = new Set(
          events.flatMap((e) => (e.type === "user/message" && e.data.inboxId ? [e.data.inboxId] : [])),
        );
        for (const inboxId of sent.get(id)!) expect(delivered.has(inboxId)).toBe(true); // no message lost
        const started = new Set(events.flatMap((e) => (e.type === "tool/call" ? [e.data.callId] : [])));
        for (const callId of counts.keys()) {
          const session = callId.split("_")[0];
          if (events.some((e) => e.type === "user/message" && e.data.text.includes(`TASK:${session} `)))
            expect(started.has(callId)).toBe(true); // whatever ran was recorded as started first (L17)
        }
      }
    },
    LONG ? 900_000 : 150_000,
  );
});
