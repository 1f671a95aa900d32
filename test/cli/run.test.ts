import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { findPairingError } from "../../src/log/pairing.js";
import { surfaceMessagesOf } from "../../src/log/surface.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { runCli } from "../support/run-cli.js";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function environment(url: string): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(tmpdir(), "bdsh-run-"));
  return { BDSH_HOME: home, BDSH_BASE_URL: url, DEEPSEEK_API_KEY: "sk-test-run-secret" };
}

describe("bdsh run (L16, INTERFACE exit codes)", () => {
  it("streams the reply to stdout and exits 0 when the turn completes", async () => {
    fake = await startFakeProvider({ script: [{ reasoning: "think", text: "Hello from the fake." }] });
    const result = await runCli(["run", "say", "hello"], environment(fake.url));
    expect(result.stderr).toMatch(
      /^\d+s · .* in · .* out · \d+ requests?( · \$[\d.]+)?\nsession \S+ · continue: bdsh run --session /,
    ); // issue 15: the end summary
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Hello from the fake.\n");
    expect(fake.requests).toHaveLength(1);
  });

  it("--json prints dense durable events from the session's first event, and nothing else", async () => {
    fake = await startFakeProvider({ script: [{ text: "ok" }] });
    const result = await runCli(["run", "--json", "hi"], environment(fake.url));
    expect(result.code).toBe(0);
    const events = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as LogEvent);
    expect(events[0]!.type).toBe("session/start");
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(new Set(events.map((e) => e.sessionId)).size).toBe(1);
    expect(events.at(-2)).toMatchObject({ type: "turn/end", data: { reason: "completed" } });
    expect(findPairingError(surfaceMessagesOf(events))).toBeUndefined();
    expect(result.stdout + result.stderr).not.toContain("sk-test-run-secret");
  });

  it("an AUTH failure exits 1 with one error line", async () => {
    fake = await startFakeProvider({
      script: [{ status: 401, body: { error: { message: "invalid key" } } }],
    });
    const result = await runCli(["run", "hi"], environment(fake.url));
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(/^bdsh: AUTH: /);
  });

  it("a missing key is a configuration error: exit 2, nothing sent", async () => {
    fake = await startFakeProvider({ script: [{ text: "never" }] });
    const env = environment(fake.url);
    delete env.DEEPSEEK_API_KEY;
    const result = await runCli(["run", "hi"], env);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      "bdsh: AUTH: no API key for deepseek: set DEEPSEEK_API_KEY or BDSH_API_KEY",
    );
    expect(fake.requests).toHaveLength(0);
  });

  it("resume continues a stored session; fork copies its completed turns", async () => {
    fake = await startFakeProvider({ script: [{ text: "first" }, { text: "second" }] });
    const env = environment(fake.url);
    const first = await runCli(["run", "--json", "one"], env);
    const sessionId = (JSON.parse(first.stdout.split("\n")[0]!) as LogEvent).sessionId;
    const second = await runCli(["sessions", "resume", sessionId, "two"], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe("second\n");
    const body = fake.requests[1]!.body as { messages: Array<{ role: string; content: string }> };
    expect(body.messages.filter((m) => m.role === "user").map((m) => m.content)).toContain("one");
    const fork = await runCli(["sessions", "fork", sessionId], env);
    expect(fork.code).toBe(0);
    const events = await runCli(["sessions", "events", fork.stdout.trim(), "--json"], env);
    const types = events.stdout
      .trimEnd()
      .split("\n")
      .map((line) => (JSON.parse(line) as LogEvent).type);
    expect(types.at(-1)).toBe("session/end-seed");
    expect(types.filter((t) => t === "turn/end")).toHaveLength(2);
  });

  it("an archived session's turn ends blocked (L18) and the run exits 1", async () => {
    fake = await startFakeProvider({ script: [{ text: "first" }, { text: "never" }] });
    const env = environment(fake.url);
    const first = await runCli(["run", "--json", "one"], env);
    const sessionId = (JSON.parse(first.stdout.split("\n")[0]!) as LogEvent).sessionId;
    expect((await runCli(["sessions", "archive", sessionId], env)).code).toBe(0);
    const again = await runCli(["sessions", "resume", sessionId, "two"], env);
    expect(again.code).toBe(1);
    expect(fake.requests).toHaveLength(1);
  });

  it("replays a recording offline with no key (the README's demo)", async () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-replay-"));
    const recording = join(process.cwd(), "examples", "what-is-this.jsonl");
    const result = await runCli(["run", "--replay", recording, "what is this package?"], { BDSH_HOME: home });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("This is **better-dsh**");
    expect(result.stderr).toContain("✓ read");
  });

  it("M10: an attached file reaches the model as a read-only copy's path, not its bytes", async () => {
    fake = await startFakeProvider({ script: [{ text: "seen" }] });
    const env = environment(fake.url);
    const file = join(mkdtempSync(join(tmpdir(), "bdsh-attach-")), "notes.txt");
    writeFileSync(file, "secret-ish contents that stay out of the request\n");
    const result = await runCli(["run", "--attach", file, "summarise the notes"], env);
    expect(result.code).toBe(0);
    const body = fake.requests[0]!.rawBody;
    expect(body).toContain('[File \\"notes.txt\\"');
    expect(body).not.toContain("secret-ish contents");
    const saved = /saved at \\"([^"\\]+)\\"/.exec(body)?.[1];
    expect(saved && readFileSync(saved, "utf8")).toContain("secret-ish contents");
  });

  it("P7: --ralph runs fresh worker rounds until one reports complete", async () => {
    fake = await startFakeProvider({
      script: [
        {
          toolCalls: [
            {
              id: "r1",
              name: "ralph_report",
              arguments: { status: "continue", summary: "half done", nextSteps: ["finish"] },
            },
          ],
        },
        {
          toolCalls: [
            {
              id: "r2",
              name: "ralph_report",
              arguments: { status: "complete", summary: "all done", evidence: ["tests pass"] },
            },
          ],
        },
      ],
    });
    const result = await runCli(["run", "--ralph", "make it work"], environment(fake.url));
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe("all done");
    expect(result.stderr).toContain("ralph: complete after 2 round(s)");
    const second = fake.requests[1]!.rawBody;
    expect(second).toContain("round 2/256");
    expect(second).toContain("half done");
    expect(second).not.toContain("r1"); // a fresh worker: no earlier conversation
  });
});
