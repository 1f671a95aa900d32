/**
 * Issue 18 item 2: MCP tools run through the same pipeline as builtin ones. A `tools/pre-execute` listener
 * that asks for approval stops an MCP call when no one can answer (T16), and the repeat-tool reminder (G1)
 * counts identical MCP calls, and each call that ran records its server and tool as details (issue 32).
 * (Validation and the spill policy: everything-stdio.test.ts.)
 */
import { describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/log/events.js";
import type { Plugin } from "../../src/loop/plugin.js";
import { noChannelText } from "../../src/tools/approvals.js";
import { FIRST_REMINDER } from "../../src/tools/guards/repeat-reminder.js";
import { EVERYTHING, runSession, stdio } from "./support.js";

const askForGetEnv: Plugin = {
  name: "ask-for-get-env",
  setup(ctx) {
    ctx.hooks.onWaterfall("tools/pre-execute", (state) =>
      state.call.name === "mcp__everything__get-env"
        ? { ...state, decision: { kind: "ask", reason: "prints the environment", summary: "get-env" } }
        : state,
    );
  },
};

describe("MCP tools in the pipeline", () => {
  it("go through approvals and the repeat reminder like builtin tools", async () => {
    const same = (id: string) => ({
      toolCalls: [{ id, name: "mcp__everything__echo", arguments: { message: "again" } }],
    });
    const session = await runSession({
      mcp: { everything: stdio(EVERYTHING, ["stdio"]) },
      plugins: [askForGetEnv],
      script: [
        { toolCalls: [{ id: "env", name: "mcp__everything__get-env", arguments: {} }] },
        same("r1"),
        same("r2"),
        same("r3"),
        { text: "done" },
      ],
    });
    expect(session.results.get("env")).toEqual({
      text: noChannelText("mcp__everything__get-env"),
      isError: true,
    });
    for (const id of ["r1", "r2", "r3"]) expect(session.results.get(id)).toEqual({ text: "Echo: again" });
    // Issue 32: what ran says which server and which of its tools; a call that never ran says nothing.
    const details = (id: string) =>
      session.events.find(
        (e): e is LogEvent<"tool/result"> => e.type === "tool/result" && e.data.callId === id,
      )?.data.details;
    expect(details("r1")).toEqual({ kind: "mcp", server: "everything", tool: "echo" });
    expect(details("env")).toBeUndefined();
    const reminders = session.events.filter(
      (e): e is LogEvent<"user/message"> => e.type === "user/message" && e.data.text.includes(FIRST_REMINDER),
    );
    expect(reminders).toHaveLength(1);
  });
});
