/**
 * Issue 15 item 4, end to end: `--continue`/`--last` pick this workspace's newest session, unique id
 * prefixes (ambiguous and unknown ones refused by name), `sessions list` per workspace / `--all` /
 * `--archived`, archive and `archive --undo`, and `resume` from another directory keeping the session's own
 * workspace and printing the conversation's tail. The real CLI, SQLite then PostgreSQL, the scripted
 * provider at the network edge. Text other engineers may still be changing is asserted loosely.
 */
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { type FreshDatabase, freshPostgresDatabase } from "../support/fresh-database.js";
import { runCli } from "../support/run-cli.js";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/**
 * PostgreSQL here is a database of this file's own: listing, `--continue` and id prefixes are about every
 * session in the store, and another file's sessions (made in the same second, so sharing a long id prefix)
 * would be candidates too.
 */
let database: FreshDatabase | undefined;
afterAll(async () => {
  await database?.drop();
});
const stores: Array<[string, () => Promise<NodeJS.ProcessEnv>]> = [
  ["SQLite", async () => ({})],
  [
    "PostgreSQL",
    async () => {
      database ??= await freshPostgresDatabase("sesscmd");
      return { DATABASE_URL: database.url };
    },
  ],
];

type Message = { role: string; content: unknown };
function userTexts(request: { body: unknown }): string[] {
  const body = request.body as { messages: Message[] };
  // The harness's own context messages (time, runtime context) travel as user messages too: left out.
  return body.messages
    .filter((m) => m.role === "user")
    .map((m) => String(m.content))
    .filter((text) => !/^(Runtime context|Time sampled)/.test(text));
}

function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return a.slice(0, i);
}

for (const [name, storeEnv] of stores) {
  describe(`session commands (${name})`, () => {
    let storeVars: NodeJS.ProcessEnv = {};
    beforeAll(async () => {
      storeVars = await storeEnv();
    });
    function setup(url: string): { env: NodeJS.ProcessEnv; workA: string; workB: string } {
      const home = mkdtempSync(join(tmpdir(), "bdsh-sess-"));
      return {
        env: { BDSH_HOME: home, BDSH_BASE_URL: url, DEEPSEEK_API_KEY: "sk-test-sess", ...storeVars },
        workA: realpathSync(mkdtempSync(join(tmpdir(), "bdsh-sess-a-"))),
        workB: realpathSync(mkdtempSync(join(tmpdir(), "bdsh-sess-b-"))),
      };
    }

    async function newSession(env: NodeJS.ProcessEnv, cwd: string, prompt: string): Promise<string> {
      const result = await runCli(["run", "--json", prompt], env, cwd);
      expect(result.code).toBe(0);
      return (JSON.parse(result.stdout.split("\n")[0]!) as LogEvent).sessionId;
    }

    async function listed(env: NodeJS.ProcessEnv, cwd: string, ...flags: string[]): Promise<string[]> {
      const result = await runCli(["sessions", "list", "--json", ...flags], env, cwd);
      expect(result.code).toBe(0);
      return result.stdout
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { id: string }).id);
    }

    it("--continue and --last continue the newest session of this workspace only", async () => {
      fake = await startFakeProvider({
        script: [{ text: "a1" }, { text: "b1" }, { text: "a2" }, { text: "a3" }, { text: "b2" }],
      });
      const { env, workA, workB } = setup(fake.url);
      const a = await newSession(env, workA, "in A");
      const b = await newSession(env, workB, "in B"); // newer, but another workspace
      const cont = await runCli(["run", "--continue", "more A"], env, workA);
      expect(cont.code).toBe(0);
      expect(cont.stderr).toContain(a.slice(-8)); // the summary names its short id
      expect(userTexts(fake.requests[2]!)).toEqual(["in A", "more A"]);
      const last = await runCli(["run", "--last", "still A"], env, workA);
      expect(last.code).toBe(0);
      expect(userTexts(fake.requests[3]!)).toEqual(["in A", "more A", "still A"]);
      const inB = await runCli(["run", "--continue", "more B"], env, workB);
      expect(inB.code).toBe(0);
      expect(inB.stderr).toContain(b.slice(-8));
      expect(userTexts(fake.requests[4]!)).toEqual(["in B", "more B"]);
    });

    it("--continue with no session in this workspace is a clear error and sends nothing", async () => {
      fake = await startFakeProvider({ script: [{ text: "elsewhere" }, { text: "never" }] });
      const { env, workA, workB } = setup(fake.url);
      await newSession(env, workB, "in B");
      const result = await runCli(["run", "--continue", "hello"], env, workA);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("no session to continue");
      expect(result.stderr).toContain(workA);
      expect(fake.requests).toHaveLength(1);
    });

    it("a unique prefix works; an ambiguous one names the candidates; an unknown one is refused", async () => {
      fake = await startFakeProvider({ script: [{ text: "one" }, { text: "two" }] });
      const { env, workA } = setup(fake.url);
      const first = await newSession(env, workA, "first");
      const second = await newSession(env, workA, "second");
      const shared = commonPrefix(first, second);
      expect(shared.length).toBeGreaterThan(0); // UUIDv7: created moments apart, same time prefix
      // One character past the shared part tells these two apart; on a PostgreSQL other test files share,
      // a session made in the same millisecond could share it too, so the prefix reaches into the random bits.
      const unique = first.slice(0, Math.max(shared.length + 1, 24));

      const shown = await runCli(["sessions", "show", unique, "--json"], env, workA);
      expect(shown.code, shown.stderr).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({ id: first });
      const events = await runCli(["sessions", "events", unique, "--json"], env, workA);
      expect(events.code, events.stderr).toBe(0);
      expect((JSON.parse(events.stdout.split("\n")[0]!) as LogEvent).sessionId).toBe(first);

      const ambiguous = await runCli(["sessions", "show", shared], env, workA);
      expect(ambiguous.code).not.toBe(0);
      expect(ambiguous.stderr).toContain("ambiguous");
      expect(ambiguous.stderr).toContain(first);
      expect(ambiguous.stderr).toContain(second);
      expect(ambiguous.stdout).toBe("");

      const unknown = await runCli(["sessions", "show", "zzzz-no-such-session"], env, workA);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain("no session zzzz-no-such-session");

      const runUnknown = await runCli(["run", "--session", "zzzz-no-such-session", "hi"], env, workA);
      expect(runUnknown.code).toBe(2);
      expect(fake.requests).toHaveLength(2);
    });

    it("sessions list: this workspace's sessions; --all every workspace's; --archived adds archived", async () => {
      fake = await startFakeProvider({ script: [{ text: "a" }, { text: "b" }, { text: "c" }] });
      const { env, workA, workB } = setup(fake.url);
      const a = await newSession(env, workA, "a");
      const archived = await newSession(env, workA, "a, archived later");
      const b = await newSession(env, workB, "b");
      expect((await runCli(["sessions", "archive", archived], env, workA)).code).toBe(0);

      expect(await listed(env, workA)).toEqual([a]);
      expect(await listed(env, workB)).toEqual([b]);
      expect(await listed(env, workA, "--archived")).toEqual([archived, a]);
      const all = await listed(env, workA, "--all", "--limit", "1000");
      expect(all).toContain(a);
      expect(all).toContain(b);
      expect(all).not.toContain(archived);
      expect(await listed(env, workA, "--all", "--archived", "--limit", "1000")).toContain(archived);

      const table = await runCli(["sessions", "list"], env, workA);
      expect(table.code).toBe(0);
      expect(table.stdout).toContain(a.slice(-8)); // short ids: the random part's last 8 digits
      expect(table.stdout).not.toContain(b.slice(-8));
    });

    it("archive refuses a run saying it is archived; archive --undo restores it and it continues", async () => {
      fake = await startFakeProvider({ script: [{ text: "first" }, { text: "second" }] });
      const { env, workA } = setup(fake.url);
      const id = await newSession(env, workA, "one");
      expect((await runCli(["sessions", "archive", id], env, workA)).code).toBe(0);

      const refused = await runCli(["run", "--session", id, "two"], env, workA);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("archived");
      expect(refused.stderr).toContain(`sessions archive --undo ${id}`);
      const resumed = await runCli(["sessions", "resume", id, "two"], env, workA);
      expect(resumed.code).toBe(1);
      expect(resumed.stderr).toContain("archived");
      expect(fake.requests).toHaveLength(1);

      expect((await runCli(["sessions", "archive", "--undo", id], env, workA)).code).toBe(0);
      const again = await runCli(["run", "--session", id, "two"], env, workA);
      expect(again.code).toBe(0);
      expect(again.stdout).toBe("second\n");
      expect(userTexts(fake.requests[1]!)).toEqual(["one", "two"]);
    });

    it("resume from another directory keeps the session's workspace and prints the conversation's tail", async () => {
      fake = await startFakeProvider({
        script: [
          {
            toolCalls: [
              {
                id: "p1",
                name: "bash",
                arguments: { description: "Where", command: "echo old-tool-$((40+2))" },
              },
            ],
          },
          { text: "First answer." },
          { toolCalls: [{ id: "p2", name: "bash", arguments: { description: "Where", command: "pwd" } }] },
          { text: "Second answer." },
        ],
      });
      const { env, workA, workB } = setup(fake.url);
      const id = await newSession(env, workA, "first question");
      const result = await runCli(["sessions", "resume", id, "where are you?"], env, workB);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("Second answer.");
      // The session's own workspace, said on stderr; the tool ran there.
      expect(result.stderr).toContain(workA);
      const toolResult = (fake.requests[3]!.body as { messages: Message[] }).messages.find(
        (m) => m.role === "tool" && String(m.content).includes(workA),
      );
      expect(toolResult).toBeDefined();
      expect(fake.requests[3]!.rawBody).not.toContain(workB);
      // The tail of the conversation, not the old tool call shown as if it ran again.
      expect(result.stderr).toContain("first question");
      expect(result.stderr).toContain("First answer.");
      expect(result.stderr).not.toContain("echo old-tool");
    });
  });
}
