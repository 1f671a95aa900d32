/**
 * What one served turn costs the store, counted: the statements (and, on PostgreSQL, the round trips and
 * transactions) a one-reply turn runs, from `POST /v1/sessions/:id/messages` to its `turn/end` and the
 * quiet after it, on SQLite and on PostgreSQL. The figure serving at scale is judged by ("at most 5
 * PostgreSQL round trips per one-reply turn"), and the list of what they are, so the next change knows
 * where they come from.
 *
 *   node --import tsx bench/serve/statements.ts        (BENCH_STORES=sqlite,postgres, BENCH_TURNS=5)
 *
 * In process: the server plugin on Fastify with the standard composition (titles on, as shipped), the
 * scripted provider answering every request at once with one short text reply. Counted on the server's own
 * store only (its pool's clients, its SQLite handle); the bench waits for each turn through a second store
 * that is not counted. Two kinds of turn: cold (a new session's first message: the agent opens, the title
 * side request runs) and cached (the next message to the same session: the agent is open). Each figure is
 * the median over BENCH_TURNS turns. Counts do not depend on the machine's load.
 */
import { tmpdir } from "node:os";
import type Database from "better-sqlite3";
import pg from "pg";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { api, startServer, tmpHome } from "../../test/server/harness.js";
import { startFakeProvider } from "../../testing/fake-provider/index.js";

const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const STORES = (process.env.BENCH_STORES ?? "sqlite,postgres").split(",");
const TURNS = Number(process.env.BENCH_TURNS ?? 5);
const TOKEN = "bench-statements-token";

/** Statements seen on the counted handle, by their first words (whitespace folded). */
class Tally {
  counting = false;
  statements = 0;
  /** PostgreSQL: queries sent (each a round trip: pg does not pipeline). */
  roundTrips = 0;
  transactions = 0;
  readonly kinds = new Map<string, number>();
  note(sql: string, roundTrip: boolean): void {
    if (!this.counting) return;
    this.statements++;
    if (roundTrip) this.roundTrips++;
    const text = sql.replace(/\s+/g, " ").trim();
    if (/^(BEGIN|START TRANSACTION)/i.test(text)) this.transactions++;
    const kind = text.slice(0, 70);
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
  }
  reset(): void {
    this.statements = 0;
    this.roundTrips = 0;
    this.transactions = 0;
    this.kinds.clear();
  }
}

/** Counts the queries of the clients this pool hands out (its own `query` goes through them too). */
function countPostgres(store: Store, tally: Tally): void {
  const pool = (store as unknown as { pool: pg.Pool }).pool;
  const counted = new WeakSet<object>();
  pool.on("acquire", (client) => counted.add(client));
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (counted.has(this)) {
      const first = args[0] as string | { text?: string; name?: string };
      tally.note(typeof first === "string" ? first : (first.text ?? `prepared ${first.name}`), true);
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
}

/** Counts every statement run on this store's SQLite handle (prepared statements, exec). */
function countSqlite(store: Store, tally: Tally): void {
  const db = (store as unknown as { db: Database.Database }).db;
  const proto = Object.getPrototypeOf(db.prepare("SELECT 1")) as Record<string, unknown>;
  for (const method of ["run", "get", "all", "iterate"]) {
    const original = proto[method] as (...a: unknown[]) => unknown;
    proto[method] = function (this: { database: unknown; source: string }, ...args: unknown[]) {
      if (this.database === db) tally.note(this.source, false);
      return original.apply(this, args);
    };
  }
  const exec = db.exec.bind(db);
  db.exec = (sql: string) => {
    tally.note(sql, false);
    return exec(sql);
  };
  // better-sqlite3's transactions run their BEGIN and COMMIT as prepared statements: counted above.
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

type Figures = { statements: number; roundTrips: number; transactions: number; kinds: Map<string, number> };

async function measure(kind: "sqlite" | "postgres"): Promise<{ cold: Figures; cached: Figures }> {
  const { home, workspace } = tmpHome("bdsh-bench-statements-");
  let databaseUrl: string | undefined;
  let admin: pg.Client | undefined;
  if (kind === "postgres") {
    admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    const name = `bench_statements_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    databaseUrl = ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  }
  const open = () => openStore({ home, ...(databaseUrl ? { databaseUrl } : {}) });
  const store = await open();
  const watcher = await open(); // not counted: the bench's own reads
  const tally = new Tally();
  if (kind === "postgres") countPostgres(store, tally);
  else countSqlite(store, tally);

  // Title side requests are answered by the fake itself.
  const fake = await startFakeProvider({ script: () => ({ text: "Done: the one reply this turn needs." }) });
  const server = await startServer({
    store,
    config: { ...DEFAULT_CONFIG, model: { ...DEFAULT_CONFIG.model, base_url: fake.url } },
    home,
    workspace,
    token: TOKEN,
    onError: (error: unknown) => console.error("server:", error),
  });
  const auth = { authorization: `Bearer ${TOKEN}` };
  const turnsEnded = async (id: string) => (await watcher.read(id, { types: ["turn/end"] })).length;
  /** Sends one message and waits for its turn/end, then for the session to be idle and its writes done. */
  const turn = async (id: string): Promise<Figures> => {
    const before = await turnsEnded(id);
    tally.reset();
    tally.counting = true;
    const sent = await api(server.url, "POST", `/v1/sessions/${id}/messages`, { text: "Say done." }, auth);
    if (sent.status !== 202) throw new Error(`message to ${id}: ${sent.status} ${JSON.stringify(sent.body)}`);
    for (;;) {
      const row = await watcher.getSession(id);
      if ((await turnsEnded(id)) > before && row?.status === "idle") break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // What follows the turn on its path (the title, the lease's release) lands within a moment.
    await new Promise((resolve) => setTimeout(resolve, 300));
    tally.counting = false;
    return {
      statements: tally.statements,
      roundTrips: tally.roundTrips,
      transactions: tally.transactions,
      kinds: new Map(tally.kinds),
    };
  };
  const newSession = async () => {
    const created = await api(server.url, "POST", "/v1/sessions", {}, auth);
    if (created.status !== 201)
      throw new Error(`new session: ${created.status} ${JSON.stringify(created.body)}`);
    return String(created.body.id);
  };
  await turn(await newSession()); // warm the process (modules, prepared statements)
  const cold: Figures[] = [];
  const cached: Figures[] = [];
  for (let i = 0; i < TURNS; i++) {
    const id = await newSession();
    cold.push(await turn(id));
    cached.push(await turn(id));
  }
  await server.app.close();
  await fake.close();
  await watcher.close();
  await store.close();
  if (admin && databaseUrl) {
    await admin.query(`DROP DATABASE IF EXISTS ${databaseUrl.split("/").at(-1)} WITH (FORCE)`);
    await admin.end();
  }
  const pick = (runs: Figures[]): Figures => {
    const m = median(runs.map((r) => r.statements));
    const at = runs.find((r) => r.statements === m)!;
    return at;
  };
  return { cold: pick(cold), cached: pick(cached) };
}

console.log(`statements per one-reply turn (median of ${TURNS}), tmp ${tmpdir()}`);
for (const kind of STORES as ("sqlite" | "postgres")[]) {
  const { cold, cached } = await measure(kind);
  for (const [label, f] of [
    ["cold", cold],
    ["cached", cached],
  ] as const) {
    console.log(
      `${kind.padEnd(8)} ${label.padEnd(6)}: ${f.statements} statements${kind === "postgres" ? `, ${f.roundTrips} round trips (each statement its own transaction but for ${f.transactions} BEGIN…COMMIT blocks)` : `, ${f.transactions} transactions`}`,
    );
    for (const [text, n] of [...f.kinds].sort((a, b) => b[1] - a[1]))
      console.log(`    ${String(n).padStart(3)}  ${text}`);
  }
}
