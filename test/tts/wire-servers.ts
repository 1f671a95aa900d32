/**
 * Scripted local servers speaking each chunked TTS provider's wire format (issue 20 acceptance): chunked HTTP
 * PCM for openai and elevenlabs, SSE `streamGenerateContent?alt=sse` for gemini, a WebSocket for xai. The only
 * fake in these tests; nothing reaches the internet.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { ProviderContext } from "../../src/tts/provider.js";

export type WireName = "openai" | "elevenlabs" | "gemini" | "xai";

export type WireScript = {
  /** Refuse with this status (and body) before any audio. */
  status?: number;
  errorBody?: string;
  /** The PCM to send, piece by piece; awaited between pieces (a gate lets a test hold the stream open). */
  chunks?: () => AsyncIterable<Buffer>;
};

export type WireRequest = { path: string; headers: IncomingMessage["headers"]; body: unknown };

export type WireServer = {
  readonly name: WireName;
  readonly baseUrl: string;
  readonly requests: WireRequest[];
  /** Resolves when the server saw the client go away mid-body (a cancelled request). */
  readonly clientGone: Promise<void>;
  script: WireScript;
  close(): Promise<void>;
};

/** Waits until the response drains or the client goes away (backpressure, so a cancel is seen). */
function drained(
  res: NodeJS.WritableStream & { once: (e: string, f: () => void) => unknown },
): Promise<void> {
  return new Promise((resolve) => {
    res.once("drain", resolve);
    res.once("close", resolve);
  });
}

export const TEST_KEY = "sk-tts-test-secret-0123456789";

export async function* pieces(...chunks: Buffer[]): AsyncIterable<Buffer> {
  for (const chunk of chunks) yield chunk;
}

export async function startWireServer(name: WireName, script: WireScript = {}): Promise<WireServer> {
  const requests: WireRequest[] = [];
  let gone!: () => void;
  const clientGone = new Promise<void>((resolve) => {
    gone = resolve;
  });
  const state = { script };
  const server: Server = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on("data", (chunk: Buffer) => body.push(chunk));
    req.on("end", async () => {
      const text = Buffer.concat(body).toString("utf8");
      requests.push({ path: req.url ?? "", headers: req.headers, body: text ? JSON.parse(text) : undefined });
      const current = state.script;
      if (current.status) {
        res.writeHead(current.status, { "content-type": "application/json" });
        res.end(current.errorBody ?? "{}");
        return;
      }
      res.on("close", () => {
        if (!res.writableFinished) gone();
      });
      const sse = name === "gemini";
      res.writeHead(200, { "content-type": sse ? "text/event-stream" : "application/octet-stream" });
      for await (const chunk of current.chunks?.() ?? pieces()) {
        if (res.destroyed) return;
        if (sse) {
          const event = {
            candidates: [
              {
                content: {
                  parts: [
                    {
                      inlineData: {
                        mimeType: "audio/L16;codec=pcm;rate=24000",
                        data: chunk.toString("base64"),
                      },
                    },
                  ],
                },
              },
            ],
          };
          if (!res.write(`data: ${JSON.stringify(event)}\r\n\r\n`)) await drained(res);
        } else if (!res.write(chunk)) await drained(res);
      }
      res.end();
    });
  });
  let wss: WebSocketServer | undefined;
  if (name === "xai") {
    wss = new WebSocketServer({
      server,
      verifyClient: (_info, done) => {
        const current = state.script;
        if (current.status) done(false, current.status);
        else done(true);
      },
    });
    wss.on("connection", (socket, req) => {
      const received: unknown[] = [];
      requests.push({ path: req.url ?? "", headers: req.headers, body: received });
      socket.on("close", () => gone());
      socket.on("message", async (data) => {
        const message = JSON.parse(data.toString()) as { type: string };
        received.push(message);
        if (message.type !== "text.done") return;
        for await (const chunk of state.script.chunks?.() ?? pieces()) {
          if (socket.readyState !== socket.OPEN) return;
          socket.send(JSON.stringify({ type: "audio.delta", delta: chunk.toString("base64") }));
        }
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ type: "audio.done" }));
      });
    });
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const baseUrl =
    name === "xai"
      ? `ws://127.0.0.1:${port}/v1/tts`
      : name === "openai"
        ? `http://127.0.0.1:${port}/v1`
        : `http://127.0.0.1:${port}`;
  return {
    name,
    baseUrl,
    requests,
    clientGone,
    get script() {
      return state.script;
    },
    set script(next: WireScript) {
      state.script = next;
    },
    close: async () => {
      for (const client of wss?.clients ?? []) client.terminate();
      wss?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A provider context whose `tts.<name>` points at the server with the test key in config. */
export function contextFor(
  server: WireServer,
  overrides: Partial<ProviderContext["config"]> = {},
): ProviderContext {
  const config = structuredClone(DEFAULT_CONFIG.tts);
  config[server.name] = { api_key: TEST_KEY, base_url: server.baseUrl };
  return { config: { ...config, ...overrides }, env: {}, fetch: globalThis.fetch };
}

/** A gate a script awaits: `open()` lets it go on. */
export function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}
