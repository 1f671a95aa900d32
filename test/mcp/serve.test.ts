/**
 * Issue 18 item 5: `bdsh serve` keeps one client per MCP server for the whole process, shared by its
 * sessions, and closes it on shutdown. The stdio server is server-everything started through a one-line
 * wrapper that writes `start` when it starts and `exit` when it ends.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import { startFakeProvider } from "../../testing/fake-provider/index.js";
import { api, startServer, testConfig, tmpHome, turnEnd, waitForEvent } from "../server/harness.js";
import { EVERYTHING, withDefaults } from "./support.js";

describe("bdsh serve and MCP", () => {
  it("shares one server process between sessions and ends it on shutdown", async () => {
    const marks = join(mkdtempSync(join(tmpdir(), "bdsh-mcp-serve-")), "marks.txt");
    const fs = 'require("node:fs")';
    const wrapper = [
      `${fs}.appendFileSync(${JSON.stringify(marks)}, "start\\n");`,
      `process.on("exit", () => ${fs}.appendFileSync(${JSON.stringify(marks)}, "exit\\n"));`,
      `import(${JSON.stringify(pathToFileURL(EVERYTHING).href)});`,
    ].join(" ");
    const fake = await startFakeProvider({
      script: (request) => {
        const messages = (request.body?.messages ?? []) as Array<{ role: string }>;
        if (messages.at(-1)?.role === "tool") return { text: "done" };
        return {
          toolCalls: [
            { id: `echo-${request.index}`, name: "mcp__everything__echo", arguments: { message: "shared" } },
          ],
        };
      },
    });
    const { home, workspace } = tmpHome("bdsh-mcp-serve-");
    const store = await openStore({ home });
    const config = {
      ...testConfig(fake.url),
      approval: "never" as const,
      mcp_servers: withDefaults({
        everything: { command: process.execPath, args: ["-e", wrapper, "stdio"] },
      }),
    };
    const server = await startServer({ store, config, home, workspace });
    try {
      const created = await Promise.all(
        ["one", "two"].map((text) => api(server.url, "POST", "/v1/sessions", { text }, server.auth)),
      );
      const ids = created.map((c) => c.body.id as string);
      await Promise.all(ids.map((id) => waitForEvent(store, id, turnEnd)));
      for (const id of ids) {
        const results = (await store.read(id)).filter(
          (e): e is LogEvent<"tool/result"> => e.type === "tool/result",
        );
        expect(results.map((r) => r.data.text)).toEqual(["Echo: shared"]);
      }
      expect(readFileSync(marks, "utf8")).toBe("start\n");
    } finally {
      await server.app.close();
      await store.close();
      await fake.close();
    }
    expect(readFileSync(marks, "utf8")).toBe("start\nexit\n");
  });
});
