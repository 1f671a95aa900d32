/**
 * Issue 14 finding 4: known secret values never reach anything stored, printed or sent. A scripted model
 * reads a file holding a secret; a provider answers 401 with a body that echoes the key. Real stores
 * (SQLite and PostgreSQL), real processes, the real built CLI; the provider is the fake.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { describeFailure } from "../../src/cli/errors.js";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import { REDACTED, Redactor } from "../../src/log/redact.js";
import { eventJson } from "../../src/log/serialize.js";
import type { LiveDelta } from "../../src/loop/agent.js";
import { openAgent, secretRedactor } from "../../src/presets/open-agent.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, type FakeReply, startFakeProvider } from "../../testing/fake-provider/index.js";
import { testDatabaseUrl } from "../support/database.js";

const KEY = "sk-live-key-3b9f27c1d8e4a6";
const SECRET = "AKIAsecret-7c2e9a41f0b35d";

let fake: FakeProvider | undefined;
let store: Store | undefined;
afterEach(async () => {
  await fake?.close();
  await store?.close();
  fake = undefined;
  store = undefined;
});

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "bdsh-secrets-ws-"));
  writeFileSync(join(dir, "secret.txt"), `${SECRET}\n`);
  // More than bash's max_output_bytes (64000), so the whole output is spilled to a blob.
  writeFileSync(join(dir, "big.txt"), `${SECRET}\n${"x".repeat(100_000)}\n${SECRET}\n`);
  return dir;
}

function environment(home: string, url: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    BDSH_HOME: home,
    BDSH_BASE_URL: url,
    DEEPSEEK_API_KEY: KEY,
    AWS_SECRET_ACCESS_KEY: SECRET,
  };
}

const bash = (id: string, command: string): FakeReply => ({
  toolCalls: [{ id, name: "bash", arguments: { description: "Show the file", command } }],
});

async function runAgent(
  databaseUrl: string | undefined,
  script: FakeReply[],
  extra: { recordFile?: string } = {},
) {
  const ws = workspace();
  const home = mkdtempSync(join(tmpdir(), "bdsh-secrets-home-"));
  store = await openStore({ home, ...(databaseUrl ? { databaseUrl } : {}) });
  fake = await startFakeProvider({ script });
  const env = environment(home, fake.url);
  const { agent } = await openAgent({
    store,
    config: { ...DEFAULT_CONFIG, approval: "never" },
    workspace: ws,
    home,
    env,
    toolOptions: { home, env },
    ...extra,
  });
  const live: LogEvent[] = [];
  agent.log.onDurable((events) => live.push(...events));
  const deltas: LiveDelta[] = [];
  agent.onDelta((delta) => deltas.push(delta));
  await agent.followup("show me the file");
  await agent.whenIdle();
  await agent.close();
  return { agent, live, deltas, stored: await store.read(agent.sessionId) };
}

const backends: [string, () => string | undefined][] = [
  ["SQLite", () => undefined],
  ["PostgreSQL", () => testDatabaseUrl()],
];

for (const [name, url] of backends) {
  describe(`issue 14 finding 4: a secret read by a command is redacted (${name})`, () => {
    it("from the tool result, the stored row, the spilled blob and the next request", async () => {
      const { live, stored } = await runAgent(url(), [
        bash("c1", "cat secret.txt"),
        bash("c2", "cat big.txt"),
        { text: "done" },
      ]);
      const results = stored.filter((e): e is LogEvent<"tool/result"> => e.type === "tool/result");
      expect(results).toHaveLength(2);
      expect(results[0]!.data.text).toBe(REDACTED);
      expect(results[1]!.data.text).toContain(REDACTED);
      // The database rows, the durable listeners (`--json`, SSE) and `--json`'s serialization.
      expect(stored.map(eventJson).join("\n")).not.toContain(SECRET);
      expect(live.map(eventJson).join("\n")).not.toContain(SECRET);
      expect(live.map(eventJson)).toEqual(stored.map(eventJson));
      // The model's history: the request after each result.
      expect(fake!.requests).toHaveLength(3);
      expect(fake!.requests[1]!.rawBody).toContain(REDACTED);
      for (const request of fake!.requests) expect(request.rawBody).not.toContain(SECRET);
      // The spilled full output.
      const blobId = /spill:\/\/([0-9a-f-]+)/.exec(results[1]!.data.text)?.[1];
      expect(blobId).toBeDefined();
      const blob = await store!.getBlob(blobId!);
      const content = blob!.content.toString("utf8");
      expect(content).not.toContain(SECRET);
      expect(content.startsWith(`${REDACTED}\n`)).toBe(true);
    });

    it("from the live deltas (SSE, the terminal) when the model streams it, split across chunks", async () => {
      const { deltas, stored } = await runAgent(url(), [
        {
          reasoning: `thinking about ${SECRET} here`,
          text: `the key is ${SECRET}, twice: ${SECRET}.`,
          chunkSize: 3,
        },
      ]);
      const joined = (type: LiveDelta["type"]) =>
        deltas
          .filter((d) => d.type === type)
          .map((d) => d.delta)
          .join("");
      expect(deltas.length).toBeGreaterThan(3);
      for (const delta of deltas) expect(delta.delta).not.toContain(SECRET.slice(0, 6));
      expect(joined("text")).toBe(`the key is ${REDACTED}, twice: ${REDACTED}.`);
      expect(joined("reasoning")).toBe(`thinking about ${REDACTED} here`);
      // What the live view showed is what the log keeps.
      const message = stored.find((e): e is LogEvent<"assistant/message"> => e.type === "assistant/message");
      expect(JSON.stringify(message?.data)).toContain(`the key is ${REDACTED}, twice: ${REDACTED}.`);
    });

    it("from a 401 body that echoes the key: the stored turn/end error and the --record file", async () => {
      const recordFile = join(mkdtempSync(join(tmpdir(), "bdsh-record-")), "run.jsonl");
      const { stored } = await runAgent(
        url(),
        [
          {
            status: 401,
            body: { error: { message: `Incorrect API key provided: ${KEY}`, type: "authentication_error" } },
          },
        ],
        { recordFile },
      );
      const end = stored.find((e): e is LogEvent<"turn/end"> => e.type === "turn/end")!;
      expect(end.data.error?.code).toBe("AUTH");
      expect(end.data.error?.message).toContain(REDACTED);
      expect(stored.map(eventJson).join("\n")).not.toContain(KEY);
      const recording = readFileSync(recordFile, "utf8");
      expect(recording).toContain(REDACTED);
      expect(recording).not.toContain(KEY);
    });
  });
}

describe("issue 14 finding 4: the built CLI", () => {
  const main = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

  function cli(args: string[], env: NodeJS.ProcessEnv, cwd: string) {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [main, ...args], { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  }

  it.skipIf(!existsSync(main))(
    "bdsh run: a 401 echoing the key never reaches stderr or --record",
    async () => {
      fake = await startFakeProvider({
        script: [{ status: 401, body: { error: { message: `invalid api key ${KEY}`, type: "auth" } } }],
      });
      const ws = workspace();
      const home = mkdtempSync(join(tmpdir(), "bdsh-secrets-home-"));
      const record = join(home, "run.jsonl");
      const result = await cli(["run", "--record", record, "hello"], environment(home, fake.url), ws);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`bdsh: AUTH: 401: invalid api key ${REDACTED}`);
      expect(result.stderr + result.stdout).not.toContain(KEY);
      expect(readFileSync(record, "utf8")).not.toContain(KEY);
    },
  );

  it.skipIf(!existsSync(main))(
    "bdsh run --json: a secret a command prints is redacted everywhere",
    async () => {
      fake = await startFakeProvider({ script: [bash("c1", "cat secret.txt"), { text: "done" }] });
      const ws = workspace();
      const home = mkdtempSync(join(tmpdir(), "bdsh-secrets-home-"));
      const record = join(home, "run.jsonl");
      const result = await cli(
        ["run", "--json", "--record", record, "show"],
        environment(home, fake.url),
        ws,
      );
      expect(result.code).toBe(0);
      const events = result.stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as LogEvent);
      const toolResult = events.find((e): e is LogEvent<"tool/result"> => e.type === "tool/result")!;
      expect(toolResult.data.text).toBe(REDACTED);
      expect(result.stdout + result.stderr).not.toContain(SECRET);
      expect(fake.requests[1]!.rawBody).not.toContain(SECRET);
      const recording = readFileSync(record, "utf8");
      expect(recording).not.toContain(SECRET);
      expect(recording).not.toContain(KEY);
    },
  );
});

describe("issue 14 finding 4: the CLI's error line", () => {
  it("describeFailure redacts every value the redactor knows", () => {
    const redactor = secretRedactor(
      { DEEPSEEK_API_KEY: KEY, DATABASE_URL: "postgres://u:db-pass-5150@h/db" },
      DEFAULT_CONFIG,
    );
    const error = Object.assign(new Error(`auth failed for ${KEY}\nat postgres://u:db-pass-5150@h`), {
      code: "STORE",
    });
    const { line } = describeFailure(error, redactor);
    expect(line).toBe(`bdsh: STORE: auth failed for ${REDACTED} at postgres://u:${REDACTED}@h`);
    expect(describeFailure(error, Redactor.none).line).toContain(KEY);
  });

  it("knows a voice provider's key written in the configuration, as it knows a web-search key", () => {
    const voiceKey = "el-config-key-7731c0ffee";
    const config = { ...DEFAULT_CONFIG, tts: { ...DEFAULT_CONFIG.tts, elevenlabs: { api_key: voiceKey } } };
    const redactor = secretRedactor({}, config);
    expect(redactor.text(`401 for key ${voiceKey}`)).toBe(`401 for key ${REDACTED}`);
  });
});
