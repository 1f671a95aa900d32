/**
 * Issue 18 against the real server-everything over stdio, through a standard-preset session: the tools
 * register as `mcp__everything__<tool>` (T1), run through the pipeline (T2, T3), and their results read as
 * T21 says: text joined, images as handles (M10) or a note, resource links listed, `isError` as `Error: …`,
 * a timed-out call cancelled with the protocol's notification; resources listed and read (spill applies).
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { McpPool } from "../../src/mcp/pool.js";
import { EVERYTHING, runSession, stdio, toolNamesOf, waitFor, withDefaults } from "./support.js";

const everything = { everything: stdio(EVERYTHING, ["stdio"]) };

describe("server-everything over stdio", () => {
  it("offers its tools under mcp__everything__ and answers echo, add, errors, images and links", async () => {
    const session = await runSession({
      mcp: everything,
      patch: { model: { ...configModel(), images: true } },
      script: [
        {
          toolCalls: [
            { id: "echo", name: "mcp__everything__echo", arguments: { message: "hello there" } },
            { id: "sum", name: "mcp__everything__get-sum", arguments: { a: 2, b: 40 } },
            { id: "bad-args", name: "mcp__everything__get-sum", arguments: { a: "two", b: 40 } },
            { id: "error", name: "mcp__everything__get-resource-reference", arguments: { resourceId: 0 } },
            { id: "image", name: "mcp__everything__get-tiny-image", arguments: {} },
            { id: "links", name: "mcp__everything__get-resource-links", arguments: { count: 2 } },
            { id: "list", name: "mcp_list_resources", arguments: {} },
          ],
        },
        { text: "done" },
      ],
    });
    const names = toolNamesOf(session.fake.requests[0]!);
    expect(names).toContain("mcp__everything__echo");
    expect(names).toContain("mcp__everything__trigger-long-running-operation");
    expect(names).not.toContain("mcp__everything__simulate-research-query"); // needs MCP tasks
    expect(names).toContain("mcp_list_resources");
    expect(names).toContain("mcp_read_resource");
    expect(names.indexOf("bash")).toBeLessThan(names.indexOf("mcp__everything__echo")); // after core tools
    const declared = (
      session.fake.requests[0]!.body as { tools: Array<{ function: { name: string; parameters: unknown } }> }
    ).tools.find((t) => t.function.name === "mcp__everything__get-sum");
    expect(declared?.function.parameters).toMatchObject({ type: "object", required: ["a", "b"] });

    expect(session.results.get("echo")).toEqual({ text: "Echo: hello there" });
    expect(session.results.get("sum")?.text).toContain("42");
    // The same validator as builtin tools: the server is never called with bad arguments (T3).
    expect(session.results.get("bad-args")).toEqual({
      text: 'Error: invalid arguments: "a" must be a number',
      isError: true,
    });
    // isError results reach the model as `Error: …` (T21).
    const error = session.results.get("error")!;
    expect(error.isError).toBe(true);
    expect(error.text).toMatch(/^Error: Invalid resourceId: 0/);
    // M10: the image is saved and its handle given; the text around it is kept.
    const image = session.results.get("image")!.text;
    expect(image).toContain("Here's the image you requested:");
    expect(image).toMatch(
      /\[Image "mcp__everything__get-tiny-image-1\.png" \(image\/png, \d+ bytes, sha256:[0-9a-f]{64}\) saved at "/,
    );
    expect(image).toContain("read_image");
    expect(image).not.toContain("iVBORw0KGgo"); // no bytes in the log
    const links = session.results.get("links")!.text;
    expect(links.match(/\[resource link demo:\/\//g)?.length).toBe(2);
    const list = session.results.get("list")!.text;
    expect(list).toContain("## everything");
    expect(list).toContain("- demo://resource/static/document/architecture.md (architecture.md");
    expect(list).toContain("- template demo://resource/dynamic/text/{resourceId}");
  });

  it("tells a model without image input that it cannot see the image", async () => {
    const session = await runSession({
      mcp: everything,
      patch: { model: { ...configModel(), images: false } },
      script: [
        { toolCalls: [{ id: "image", name: "mcp__everything__get-tiny-image", arguments: {} }] },
        { text: "ok" },
      ],
    });
    const text = session.results.get("image")!.text;
    expect(text).toContain("this model cannot view images");
    expect(text).not.toContain("[Image ");
  });

  it("reads resources; a long read is spilled like any result (C14)", async () => {
    const session = await runSession({
      mcp: everything,
      patch: { spill: { ...DEFAULT_CONFIG.spill, max_inline_tokens: 25 } },
      script: [
        {
          toolCalls: [
            {
              id: "read",
              name: "mcp_read_resource",
              arguments: { server: "everything", uri: "demo://resource/static/document/architecture.md" },
            },
            { id: "unknown", name: "mcp_read_resource", arguments: { server: "nope", uri: "x" } },
            {
              id: "missing",
              name: "mcp_read_resource",
              arguments: { server: "everything", uri: "demo://nope" },
            },
          ],
        },
        { text: "ok" },
      ],
    });
    const read = session.results.get("read")!;
    expect(read.isError).toBeUndefined();
    expect(read.text).toContain("Full formatted result stored at: spill://");
    expect(session.results.get("unknown")!.text).toBe(
      'Error: no MCP server named "nope"; configured: everything',
    );
    expect(session.results.get("missing")!.text).toBe("Error: Resource demo://nope not found");
  });

  it("cancels an aborted or timed-out call with notifications/cancelled (T21, T6)", async () => {
    const sent: Array<{ method?: string; id?: number; params?: { requestId?: number } }> = [];
    const mcp = withDefaults({ everything: stdio(EVERYTHING, ["stdio"], { timeout_ms: 300 }) });
    const pool = new McpPool(mcp, {
      env: {},
      cwd: process.cwd(),
      trace: (direction, message) => {
        if (direction === "out") sent.push(message as never);
      },
    });
    const calls = () => sent.filter((m) => m.method === "tools/call");
    const cancelled = () => sent.filter((m) => m.method === "notifications/cancelled");
    try {
      await pool.ready();
      const connection = pool.connections.get("everything")!;
      const controller = new AbortController();
      const outcome = connection
        .callTool(
          "trigger-long-running-operation",
          { duration: 60, steps: 60 },
          {
            signal: controller.signal,
            timeoutMs: 600_000,
          },
        )
        .then(
          () => "resolved",
          (error: Error) => error.message,
        );
      await waitFor(connection, () => calls().length === 1);
      controller.abort();
      expect(await outcome).toBe("tool call aborted");
      expect(cancelled()[0]?.params?.requestId).toBe(calls()[0]!.id);

      // Through a session: the pipeline's timeout (timeout_ms) aborts the call, which cancels it.
      const session = await runSession({
        mcp,
        pool,
        script: [
          {
            toolCalls: [
              {
                id: "long",
                name: "mcp__everything__trigger-long-running-operation",
                arguments: { duration: 60, steps: 60 },
              },
            ],
          },
          { text: "ok" },
        ],
      });
      expect(session.results.get("long")).toEqual({
        text: "Error: tool call timed out after 300ms",
        isError: true,
      });
      expect(connection.state).toBe("ready"); // a cancelled call leaves the connection as it was
      const long = calls().find(
        (m) => JSON.stringify(m).includes("trigger-long-running-operation") && m.id !== calls()[0]!.id,
      )!;
      expect(cancelled().map((m) => m.params?.requestId)).toContain(long.id);
    } finally {
      await pool.close();
    }
  });
});

function configModel() {
  return {
    provider: "deepseek" as const,
    id: "deepseek-flash",
    context_window: 1_048_576,
    max_output_tokens: 32_768,
    effort: "high" as const,
  };
}
