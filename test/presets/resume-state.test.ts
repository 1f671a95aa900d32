/**
 * What survives a resume: file observations are in the log (`files/observed`, C18), so an agent opened
 * again on the same session may edit a file it read before, unchanged since; one changed meanwhile is
 * stale and must be read again. The history the model sees is intact.
 */

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { openTestAgent } from "../support/test-agent.js";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe("state that survives a resume", () => {
  it("a file read before the resume, unchanged since, may be edited by the resumed agent", async () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-r2-"));
    const workspace = mkdtempSync(join(tmpdir(), "bdsh-r2-ws-"));
    const file = join(workspace, "notes.txt");
    writeFileSync(file, "alpha\n");
    const edit = {
      id: "e1",
      name: "edit",
      arguments: { file_path: file, old_string: "alpha", new_string: "beta" },
    };
    fake = await startFakeProvider({
      script: [
        { toolCalls: [{ id: "r1", name: "read", arguments: { file_path: file } }] },
        { text: "read it" },
        { toolCalls: [edit] },
        { text: "edited" },
      ],
    });
    const store = await openStore({ home });
    const config = { ...DEFAULT_CONFIG, model: { ...DEFAULT_CONFIG.model, base_url: fake.url } };
    const common = {
      store,
      config,
      workspace,
      home,
    };
    const first = await openTestAgent(common);
    await first.agent.followup("read the notes");
    await first.agent.whenIdle();
    await first.agent.close();

    const resumed = await openTestAgent({ ...common, sessionId: first.session.id });
    await resumed.agent.followup("now change alpha to beta");
    await resumed.agent.whenIdle();
    await resumed.agent.close();

    const events = await store.read(first.session.id);
    const result = events.find(
      (e): e is LogEvent<"tool/result"> => e.type === "tool/result" && e.data.callId === "e1",
    );
    expect(result?.data.isError).toBeUndefined();
    expect(readFileSync(file, "utf8")).toBe("beta\n");
    // The history is whole: the resumed request still carries the first read's result.
    expect(fake.requests[2]!.rawBody).toContain("alpha");
    await store.close();
  });
});
