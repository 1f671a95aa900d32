/**
 * A scriptable fake model provider: a real HTTP server on 127.0.0.1 speaking both wire formats, for the
 * tests and benches of every layer above the model (ARCHITECTURE "Tests and proofs"). No test reaches the
 * internet; point any preset's base URL at `fake.url`.
 *
 * Usage:
 *   const fake = await startFakeProvider({ script: [
 *     { reasoning: "Look first.", toolCalls: [{ id: "c1", name: "read", arguments: { path: "a.ts" } }] },
 *     { status: 429, headers: { "retry-after": "1" } },
 *     { text: "Done." },
 *   ] });
 *   const route = resolveRoute({ provider: "deepseek", baseUrl: fake.url }, {});
 *   …
 *   fake.requests[0].body;   // the JSON body the adapter sent, headers too
 *   await fake.close();
 *
 * Endpoints: any POST path ending in `/chat/completions` is OpenAI Chat Completions, any ending in
 * `/messages` is Anthropic Messages, so every preset's path layout works (`/chat/completions`,
 * `/v1/chat/completions`, `/v1/messages`, `/anthropic/v1/messages`, …). A GET of a path ending in
 * `/models` is the model list (`bdsh doctor --online`), in a shape both wire formats read
 * (`{object:"list", data:[{id, object:"model", type:"model"}], has_more:false}`); with `apiKey` set it
 * answers 401 unless the request carries that key (`authorization: Bearer …` or `x-api-key`). Anything
 * else is a 404. The model list takes no scripted reply, but like every request it is logged in
 * `requests` and so counts in the index an array script is read by.
 *
 * Script: an array (one reply per request, in order; past its end every request gets a 500 saying so),
 * or a function of the request. A reply is a `FakeReply` (./script.ts): reasoning, text, parallel tool
 * calls with arguments streamed in `chunkSize` pieces, usage, a finish value or none; or an HTTP error
 * with headers; or exact `raw` bytes in chosen piece sizes. Faults: `drop` (socket destroyed mid-stream),
 * `stall` (silence, for idle timeouts), `malformed` (a non-JSON frame), `eof` (clean end too early).
 *
 * Titles: a request with the header `x-bdsh-purpose: title` (the session title side request) is answered
 * from `titles` (default: the text "Scripted session") and logged in `titleRequests`, never in `requests`
 * nor read from `script`: existing scripts and request counts do not see it.
 *
 * Invariants: every request is logged in `requests` (or `titleRequests`) before it is answered; `close()` destroys open
 * sockets, so a stalled reply never keeps a test alive.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { anthropicFrames } from "./anthropic-frames.js";
import { openAiFrames } from "./openai-frames.js";
import type { FakeReply, FakeRequest, FakeScript, FakeWire } from "./script.js";

export * from "./script.js";

export type FakeProvider = {
  /** `http://127.0.0.1:<port>`; use as base URL (add `/anthropic` or `/v1` freely). */
  readonly url: string;
  /** Every request received, in order, except title side requests. */
  readonly requests: FakeRequest[];
  /** Requests marked `x-bdsh-purpose: title` (a session title side request), apart from `requests`. */
  readonly titleRequests: FakeRequest[];
  /** Replaces the script (e.g. between phases of a test). */
  setScript(script: FakeScript): void;
  /** Replaces the title answers. */
  setTitles(titles: FakeReply | FakeScript | undefined): void;
  close(): Promise<void>;
};

export type FakeProviderOptions = {
  script: FakeScript;
  /** The key the model list (`GET …/models`) accepts; unset: any request, keyed or not, gets the list. */
  apiKey?: string;
  /** The ids the model list names (default `["fake-model"]`). */
  models?: readonly string[];
  /**
   * Answers to title side requests (header `x-bdsh-purpose: title`): one reply for all, an array read by
   * the title request's own index, or a function. Default `{ text: DEFAULT_FAKE_TITLE }`. Title requests are
   * never logged in `requests` nor read from `script`, so a test's request count and steps stay the same.
   */
  titles?: FakeReply | FakeScript;
};

/** What the fake answers a title side request with, unless told otherwise. */
export const DEFAULT_FAKE_TITLE = "Scripted session";

export async function startFakeProvider(options: FakeProviderOptions): Promise<FakeProvider> {
  let script = options.script;
  let titles = options.titles;
  const requests: FakeRequest[] = [];
  const titleRequests: FakeRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`fake provider failed: ${String(error)}`);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const wire: FakeWire | undefined = path.endsWith("/chat/completions")
      ? "openai-chat"
      : path.endsWith("/messages")
        ? "anthropic-messages"
        : undefined;
    const isTitle = req.headers["x-bdsh-purpose"] === "title";
    const log = isTitle ? titleRequests : requests;
    const request: FakeRequest = {
      index: log.length,
      method: req.method ?? "GET",
      path,
      wire,
      headers: req.headers,
      body: parseJson(rawBody),
      rawBody,
    };
    log.push(request);
    if (request.method === "GET" && path.endsWith("/models")) {
      listModels(req, res);
      return;
    }
    if (request.method !== "POST" || wire === undefined) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no such endpoint: ${path}`, type: "not_found" } }));
      return;
    }
    const reply = isTitle
      ? await titleReply(titles, request)
      : typeof script === "function"
        ? await script(request, request.index)
        : (script[request.index] ?? {
            status: 500,
            body: { error: { message: `fake provider: no scripted reply for request ${request.index}` } },
          });
    await respond(
      res,
      reply,
      wire,
      typeof request.body?.model === "string" ? request.body.model : "fake-model",
    );
  }

  function listModels(req: IncomingMessage, res: ServerResponse): void {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const sent = bearer ?? req.headers["x-api-key"];
    if (options.apiKey !== undefined && sent !== options.apiKey) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          error: { message: "Authentication Fails (the API key is invalid)", type: "authentication_error" },
        }),
      );
      return;
    }
    const data = (options.models ?? ["fake-model"]).map((id) => ({ id, object: "model", type: "model" }));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "list", data, has_more: false }));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    titleRequests,
    setScript(next) {
      script = next;
    },
    setTitles(next) {
      titles = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function titleReply(
  titles: FakeReply | FakeScript | undefined,
  request: FakeRequest,
): Promise<FakeReply> {
  if (titles === undefined) return { text: DEFAULT_FAKE_TITLE };
  if (typeof titles === "function") return titles(request, request.index);
  if (Array.isArray(titles))
    return (
      (titles as readonly FakeReply[])[request.index] ?? {
        status: 500,
        body: { error: { message: `fake provider: no scripted title for title request ${request.index}` } },
      }
    );
  return titles as FakeReply;
}

async function respond(res: ServerResponse, reply: FakeReply, wire: FakeWire, model: string): Promise<void> {
  if (reply.status !== undefined && reply.status >= 300) {
    const body =
      typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body ?? errorBody(reply.status));
    res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
    res.end(body);
    return;
  }
  res.writeHead(reply.status ?? 200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    ...reply.headers,
  });
  res.flushHeaders();
  if (reply.raw !== undefined) {
    await writeRaw(res, Buffer.from(reply.raw), reply);
    return;
  }
  const frames = wire === "openai-chat" ? openAiFrames(reply, model) : anthropicFrames(reply, model);
  const fault = reply.fault;
  for (let i = 0; i <= frames.length; i++) {
    if (fault && fault.afterFrames === i) {
      if (fault.kind === "drop") {
        // Let the frames already written reach the client, then cut the connection.
        const socket = res.socket;
        if (socket) await new Promise<void>((resolve) => socket.write("", () => resolve()));
        socket?.destroy();
        return;
      }
      if (fault.kind === "eof") break;
      if (fault.kind === "hold") await fault.until.catch(() => undefined);
      if (fault.kind === "malformed") await write(res, `data: ${fault.data ?? "{not json"}\n\n`);
      if (fault.kind === "stall") {
        if (fault.ms === undefined) return; // silent until the client goes away or close()
        await delay(fault.ms);
      }
    }
    const frame = frames[i];
    if (frame === undefined) break;
    if (reply.frameDelayMs) await delay(reply.frameDelayMs);
    if (res.destroyed) return;
    await write(res, frame);
  }
  res.end();
}

async function writeRaw(res: ServerResponse, bytes: Buffer, reply: FakeReply): Promise<void> {
  const sizes = reply.rawChunkSizes?.length ? reply.rawChunkSizes : [bytes.length || 1];
  for (let at = 0, n = 0; at < bytes.length; n++) {
    const size = Math.max(1, sizes[n % sizes.length]!);
    if (reply.frameDelayMs) await delay(reply.frameDelayMs);
    if (res.destroyed) return;
    await write(res, bytes.subarray(at, at + size));
    at += size;
  }
  res.end();
}

function write(res: ServerResponse, data: string | Uint8Array): Promise<void> {
  if (res.write(data)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

function errorBody(status: number): Record<string, unknown> {
  const type = status === 429 ? "rate_limit_error" : status === 401 ? "authentication_error" : "api_error";
  return { error: { message: `fake provider error ${status}`, type } };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
