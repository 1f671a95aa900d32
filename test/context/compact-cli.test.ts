/** C11 through the real CLI: `bdsh compact ID` on a fresh and on a used session. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NOTHING_TO_COMPACT } from "../../src/context/compaction/texts.js";
import { openStore } from "../../src/store/open-store.js";
import { startFakeProvider } from "../../testing/fake-provider/index.js";
import { runCli } from "../support/run-cli.js";

describe("C11 bdsh compact ID", () => {
  it("compacts a session once, then has nothing left to compact", async () => {
    const fake = await startFakeProvider({
      script: [{ text: "first answer" }, { text: "## Primary Request and Intent\n- hi" }],
    });
    const home = mkdtempSync(join(tmpdir(), "bdsh-compact-"));
    const env = { BDSH_HOME: home, BDSH_BASE_URL: fake.url, DEEPSEEK_API_KEY: "sk-test" };
    try {
      const first = await runCli(["run", "--json", "hello"], env, home);
      expect(first.code).toBe(0);
      const sessionId = (JSON.parse(first.stdout.split("\n")[0]!) as { sessionId: string }).sessionId;
      const done = await runCli(["compact", sessionId], env, home);
      expect(done.stderr).toBe("");
      expect(done.stdout.trim()).toMatch(/^Compacted \d+ history items \(~\d+ tokens\)\.$/);
      expect(fake.requests.at(-1)?.headers["x-bdsh-purpose"]).toBe("compaction");
      const store = await openStore({ home });
      const events = await store.read(sessionId);
      await store.close();
      const replaced = Number(/Compacted (\d+)/.exec(done.stdout)?.[1]);
      expect(events.filter((e) => e.type === "compaction/end").map((e) => e.data)).toEqual([
        { ok: true, replaced },
      ]);
      // Only the checkpoint and the last reply are left: nothing more to condense.
      const nothing = await runCli(["compact", sessionId], env, home);
      expect(nothing.stdout.trim()).toBe(NOTHING_TO_COMPACT);
      expect(nothing.code).toBe(0);
      const missing = await runCli(["compact", "nope"], env, home);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^bdsh: NOT_FOUND: /);
    } finally {
      await fake.close();
    }
  });
});
