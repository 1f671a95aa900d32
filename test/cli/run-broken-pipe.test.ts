/**
 * `bdsh run --json | head -5`: the reader leaves early; the run is cancelled and closed before the process
 * ends, so the session is not left `running`.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { BDSH_MAIN } from "../support/run-cli.js";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe("run --json into a reader that leaves early", () => {
  it("the session ends idle, its turn closed", async () => {
    fake = await startFakeProvider({
      script: (request) =>
        ((request.body?.messages ?? []) as { role: string }[]).some((m) => m.role === "tool")
          ? { text: "done" }
          : { toolCalls: [{ id: "c1", name: "bash", arguments: { command: "sleep 1; echo slow" } }] },
    });
    const root = mkdtempSync(join(tmpdir(), "bdsh-epipe-"));
    const home = join(root, "home");
    const work = join(root, "work");
    mkdirSync(home);
    mkdirSync(work);
    const child = spawn(process.execPath, [BDSH_MAIN, "run", "--json", "go"], {
      cwd: work,
      env: { PATH: process.env.PATH, BDSH_HOME: home, BDSH_BASE_URL: fake.url, DEEPSEEK_API_KEY: "sk-test" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let lines = 0;
    let sessionId = "";
    child.stdout.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        if (++lines === 1) sessionId = (JSON.parse(line) as { sessionId: string }).sessionId;
        if (lines === 5) child.stdout.destroy(); // `head -5` has what it wanted
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    const store = await openStore({ home });
    try {
      expect((await store.getSession(sessionId))?.status).not.toBe("running");
      const events = await store.read(sessionId);
      expect(events.filter((e) => e.type === "turn/start").length).toBe(
        events.filter((e) => e.type === "turn/end").length,
      );
    } finally {
      await store.close();
    }
  });
});
