/**
 * The floor of a served turn: the least a durable one-reply turn can cost a Node process on this machine, run
 * by ./langgraph-peer.ts with BENCH_PEER=floor in the same harness as LangGraph.js (the same clients, fake
 * provider, backlog and CPU accounting). No harness does less and stays durable:
 *
 * - one node:http request in (`POST /threads/:id/messages` `{ text }`), its JSON parsed;
 * - the user's message committed as one row (the log's first durable point);
 * - one streamed request to the provider over node:http with a keep-alive agent: the thread's messages (held
 *   in memory, as a cached agent holds them), a system prompt and one tool declaration, its SSE parsed by
 *   `eventsource-parser` and the reply's text joined;
 * - the reply and the turn's end committed as two rows in one statement, fsynced (SQLite `synchronous=FULL`
 *   for that statement, PostgreSQL `synchronous_commit` on), then the answer.
 *
 * What it leaves out is everything a harness is for: no hooks, guards, tool registry, prompt assembly,
 * redaction, leases, inbox, events to watchers, metrics, logging, retries or compaction. So the floor is not a
 * peer to beat; it says how much of a served turn's CPU is Node, HTTP and the database here, and so how far
 * below it no harness can go on this machine.
 */
import { Agent, request } from "node:http";
import Database from "better-sqlite3";
import { createParser } from "eventsource-parser";
import pg from "pg";
import { serveThreadMessages } from "./thread-endpoint.js";

type Row = [thread: string, seq: number, kind: string, data: string];

type FloorStore = {
  append(rows: Row[], fsync: boolean): Promise<void>;
  close(): Promise<void>;
};

function sqliteStore(file: string): FloorStore {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(
    "CREATE TABLE IF NOT EXISTS events (thread TEXT, seq INTEGER, kind TEXT, data TEXT, PRIMARY KEY (thread, seq))",
  );
  const insert = db.prepare("INSERT INTO events (thread, seq, kind, data) VALUES (?, ?, ?, ?)");
  const insertAll = db.transaction((rows: Row[]) => {
    for (const row of rows) insert.run(...row);
  });
  return {
    async append(rows, fsync) {
      if (fsync) db.exec("PRAGMA synchronous = FULL");
      try {
        insertAll(rows);
      } finally {
        if (fsync) db.exec("PRAGMA synchronous = NORMAL");
      }
    },
    async close() {
      db.close();
    },
  };
}

async function postgresStore(url: string): Promise<FloorStore> {
  // The same pool size as `bdsh serve`'s default (`store.postgres_pool_size`).
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  await pool.query(
    "CREATE TABLE IF NOT EXISTS events (thread TEXT, seq INTEGER, kind TEXT, data JSONB, PRIMARY KEY (thread, seq))",
  );
  return {
    async append(rows) {
      const values = rows.map((_, i) => `($${i * 4 + 1}, $${i * 4 + 2}, $${i * 4 + 3}, $${i * 4 + 4})`);
      await pool.query({
        name: `floor-append-${rows.length}`,
        text: `INSERT INTO events (thread, seq, kind, data) VALUES ${values.join(", ")}`,
        values: rows.flat(),
      });
    },
    close: () => pool.end(),
  };
}

/** A system prompt and one tool declaration, written once, as a harness writes its frozen declarations. */
const PREAMBLE = JSON.stringify({
  tools: [
    {
      type: "function",
      function: {
        name: "read",
        description: "Read a text file.",
        parameters: {
          type: "object",
          properties: { file_path: { type: "string" } },
          required: ["file_path"],
        },
      },
    },
  ],
}).slice(1, -1);
const SYSTEM = { role: "system", content: "You are a careful assistant. Answer briefly." };

/** One streamed chat completion; resolves to the reply's text. */
function complete(agent: Agent, url: URL, messages: object[]): Promise<string> {
  const body = `{"model":"fake-model","stream":true,${PREAMBLE},"messages":${JSON.stringify(messages)}}`;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          authorization: "Bearer bench",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`provider answered ${res.statusCode}`));
          return;
        }
        let text = "";
        const parser = createParser({
          onEvent: (event) => {
            if (event.data === "[DONE]") return;
            const chunk = JSON.parse(event.data) as { choices?: Array<{ delta?: { content?: string } }> };
            text += chunk.choices?.[0]?.delta?.content ?? "";
          },
        });
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => parser.feed(chunk));
        res.on("end", () => resolve(text));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

export async function serveFloor(backlog: number): Promise<void> {
  const database = process.env.LG_DATABASE!;
  const store = process.env.LG_STORE === "postgres" ? await postgresStore(database) : sqliteStore(database);
  const agent = new Agent({ keepAlive: true });
  const modelUrl = new URL(`${process.env.LG_MODEL_URL}/v1/chat/completions`);
  const threads = new Map<string, { messages: object[]; seq: number }>();

  const turn = async (thread: string, text: string): Promise<void> => {
    const log = threads.get(thread) ?? { messages: [SYSTEM], seq: 0 };
    threads.set(thread, log);
    const user = { role: "user", content: text };
    log.messages.push(user);
    await store.append([[thread, ++log.seq, "user", JSON.stringify(user)]], false);
    const reply = { role: "assistant", content: await complete(agent, modelUrl, log.messages) };
    log.messages.push(reply);
    await store.append(
      [
        [thread, ++log.seq, "assistant", JSON.stringify(reply)],
        [thread, ++log.seq, "turn_end", '{"reason":"completed"}'],
      ],
      true,
    );
  };

  await serveThreadMessages({
    backlog,
    close: () => store.close(),
    turn: async (thread, text) => {
      await turn(thread, text);
      return { ok: true };
    },
  });
}
