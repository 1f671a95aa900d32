/**
 * SP8 with MCP's `notifications/tools/list_changed` (issue 18 item 4): a tool added mid-session is declared
 * after the others and announced by one developer message; a removed one stays declared (the list never
 * shrinks) and answers that the server no longer offers it. Earlier requests are never rewritten. Also T21's
 * empty-result text.
 */
import { describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import { McpPool } from "../../src/mcp/pool.js";
import { CHANGING, runSession, stdio, toolNamesOf, waitFor, withDefaults } from "./support.js";

const call = (id: string, tool: string, args: Record<string, unknown> = {}) => ({
  toolCalls: [{ id, name: `mcp__changing__${tool}`, arguments: args }],
});

describe("tools/list_changed", () => {
  it("appends an added tool, keeps a removed one declared, and announces both as developer messages", async () => {
    const mcp = withDefaults({ changing: stdio(CHANGING) });
    const pool = new McpPool(mcp, { env: {}, cwd: process.cwd() });
    try {
      const has = (tool: string) => pool.connections.get("changing")!.tools.some((t) => t.name === tool);
      const session = await runSession({
        mcp,
        pool,
        prompts: ["grow", "use", "shrink", "use again"],
        script: [
          {
            toolCalls: [
              { id: "grow", name: "mcp__changing__grow", arguments: {} },
              { id: "silent", name: "mcp__changing__silent", arguments: {} },
            ],
          },
          { text: "grown" },
          call("extra-1", "extra", { word: "hi" }),
          { text: "used" },
          call("shrink", "shrink"),
          { text: "shrunk" },
          call("extra-2", "extra", { word: "bye" }),
          { text: "done" },
        ],
        between: async (turn) => {
          const connection = pool.connections.get("changing")!;
          if (turn === 0) await waitFor(connection, () => has("extra"));
          if (turn === 2) await waitFor(connection, () => !has("extra"));
        },
      });
      expect(session.results.get("silent")).toEqual({
        text: "(mcp__changing__silent returned no model-visible content)",
      });
      const requests = session.fake.requests;
      const first = toolNamesOf(requests[0]!);
      const grown = toolNamesOf(requests[2]!);
      expect(first).not.toContain("mcp__changing__extra");
      expect(grown).toEqual([...first, "mcp__changing__extra"]); // appended: the cached prefix survives
      expect([first, grown]).toContainEqual(toolNamesOf(requests[1]!));
      for (const request of requests.slice(2)) expect(toolNamesOf(request)).toEqual(grown); // never shrinks

      expect(session.results.get("extra-1")).toEqual({ text: "extra: hi" });
      expect(session.results.get("extra-2")).toEqual({
        text: 'Error: MCP server "changing" no longer offers the tool "extra".',
        isError: true,
      });

      const announcements = session.events.filter(
        (e): e is Extract<LogEvent, { type: "developer/message" }> => e.type === "developer/message",
      );
      expect(announcements.map((e) => [e.data.toolAdditions, e.data.toolRemovals])).toEqual([
        [["mcp__changing__extra"], []],
        [[], ["mcp__changing__extra"]],
      ]);
      expect(announcements[0]!.data.text).toContain("Now available: mcp__changing__extra.");
      expect(announcements[1]!.data.text).toContain("No longer available");
      // The model saw the announcement in the request that first declared the tool.
      const body = JSON.stringify(requests[2]!.body);
      expect(body).toContain("Now available: mcp__changing__extra.");
      // Earlier requests' history is never rewritten: request 0's messages are a prefix of request 2's.
      const messages = (r: { body: unknown }) => (r.body as { messages: unknown[] }).messages;
      expect(messages(requests[2]!).slice(0, messages(requests[0]!).length)).toEqual(messages(requests[0]!));
    } finally {
      await pool.close();
    }
  });
});
