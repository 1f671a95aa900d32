/**
 * R2: what does not survive a resume. File observations live in the agent's memory (C18), so an agent
 * opened again on the same session must read a file again before it may edit it; the log itself (and so
 * the history the model sees) is intact.
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

describe("R2 state that does not survive resume", () => {
  it("a file read before the resume must be read again before it is edited", async () => {
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
        { text: "could not edit" },
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
    expect(result?.data.text).toContain("file has not been read");
    expect(readFileSync(file, "utf8")).toBe("alpha\n");
    // The history is whole: the resumed request still carries the first read's result.
    expect(fake.requests[2]!.rawBody).toContain("alpha");
    await store.close();
  });
});
