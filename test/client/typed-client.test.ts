/**
 * Issue 37 item 4: `better-dsh/client` drives a session end to end against a real `bdsh serve` process:
 * create, message, the event stream across a dropped connection (resumed by `Last-Event-ID`, each event
 * once), an approval answered over the API, and the session's usage read back.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBdshClient } from "../../src/client/index.js";
import type { LogEvent } from "../../src/log/events.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { type ServeProcess, startServe } from "../chaos/serve-process.js";

const DANGEROUS = "pkill -f bdsh-no-such-process || true";
let fake: FakeProvider;
let serve: ServeProcess;
let home: string;

beforeAll(async () => {
  fake = await startFakeProvider({
    script: (request) => {
      const messages = (request.body?.messages ?? []) as { role: string }[];
      if (!messages.some((m) => m.role === "tool"))
        return {
          toolCalls: [{ id: "kill-1", name: "bash", arguments: { command: DANGEROUS, description: "stop" } }],
        };
      return { text: "stopped", usage: { input: 30, cacheRead: 5, output: 3 } };
    },
  });
  home = mkdtempSync(join(tmpdir(), "bdsh-client-"));
  const workspace = join(home, "ws");
  mkdirSync(workspace);
  const configFile = join(home, "config.yaml");
  writeFileSync(
    configFile,
    "session:\n  titles: false\ncontinuation:\n  announced_action: false\n  open_todos: false\n",
  );
  serve = await startServe({ fakeUrl: fake.url, home, workspace, configFile, approval: "ask" });
});

afterAll(async () => {
  serve?.child.kill("SIGTERM");
  await serve?.exited;
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

/** A fetch whose first event stream is cut after `bytes` bytes, as a dropped connection would cut it. */
function cuttingFetch(bytes: number): { fetch: typeof fetch; streams: string[] } {
  const streams: string[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const url = String(input instanceof Request ? input.url : input);
    if (!url.includes("/events")) return response;
    const headers = new Headers(init?.headers);
    streams.push(headers.get("last-event-id") ?? "");
    if (streams.length > 1 || !response.body) return response;
    let sent = 0;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done || sent >= bytes) {
          await reader.cancel();
          controller.close();
          return;
        }
        const part = value.subarray(0, Math.max(0, bytes - sent));
        sent += part.length;
        controller.enqueue(part);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return { fetch: wrapped, streams };
}

describe("better-dsh/client against bdsh serve (issue 37 item 4)", () => {
  it("creates, messages, streams across a reconnect, approves and reads usage", async () => {
    const cut = cuttingFetch(600);
    const bdsh = createBdshClient({ baseUrl: serve.url, token: serve.token, fetch: cut.fetch });

    const created = await bdsh.POST("/v1/sessions", { body: {} });
    expect(created.response.status).toBe(201);
    const id = created.data!.id;
    const sent = await bdsh.POST("/v1/sessions/{id}/messages", {
      params: { path: { id } },
      body: { text: "stop the stray process" },
    });
    expect(sent.response.status).toBe(202);

    const seen: LogEvent[] = [];
    const resumedAfter: number[] = [];
    for await (const event of bdsh.events(id, {
      retryDelayMs: 10,
      onReconnect: (seq) => resumedAfter.push(seq),
    })) {
      seen.push(event);
      if (event.type === "approval/requested") {
        const pending = await bdsh.GET("/v1/sessions/{id}/approvals", { params: { path: { id } } });
        expect(pending.data!.approvals.map((a) => a.id)).toEqual([event.data.id]);
        const answered = await bdsh.POST("/v1/sessions/{id}/approvals", {
          params: { path: { id } },
          body: { approvalId: event.data.id, decision: "allow-once" },
        });
        expect(answered.response.status).toBe(202);
      }
      if (event.type === "turn/end") break;
    }
    // The first connection was cut; the helper resumed after the last seq it had yielded, and every
    // durable event arrived once, in order.
    expect(resumedAfter.length).toBeGreaterThan(0);
    expect(resumedAfter[0]).toBeGreaterThan(0);
    expect(cut.streams[1]).toBe(String(resumedAfter[0]));
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    const end = seen.at(-1) as LogEvent<"turn/end">;
    expect(end.data.reason).toBe("completed");
    expect(seen.some((e) => e.type === "approval/answered")).toBe(true);

    const session = await bdsh.GET("/v1/sessions/{id}", { params: { path: { id } } });
    expect(session.data!.usage).toMatchObject({ requests: 2, output: 3 + 5 });
  });
});
