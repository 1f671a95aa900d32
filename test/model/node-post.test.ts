/**
 * Issue 36: the provider's streaming POST goes over node:http (keep-alive pool, 'data' events) instead of
 * the global fetch. These pin what fetch gave for free and the new client must keep: the URL and headers
 * as given, redirects refused (M1), no half-read socket left open or reused, UTF-8 split across chunks,
 * an abort that ends a pending read (L7), a bounded error body, and TLS verification.
 *
 * Each test runs its own small server, so it can hold a response open, count connections and see them
 * close; every wait is on an event (a request, a socket's close), never on time.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FetchLike, postSse, type SseRequest } from "../../src/model/transport.js";
import { LlmError } from "../../src/model/types.js";

type Local = {
  url: string;
  /** Every request, in order of arrival. */
  requests: { url: string; rawHeaders: string[]; body: Buffer; socket: Socket }[];
  /** Every connection, in order, with a promise of its close. */
  connections: { socket: Socket; closed: Promise<void> }[];
};

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

/** A local server answering every request with `handler`, once its body has been read. */
async function serve(
  handler: (req: IncomingMessage, res: ServerResponse, index: number) => void,
  tls?: { key: Buffer; cert: Buffer },
): Promise<Local> {
  const local: Local = { url: "", requests: [], connections: [] };
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const index = local.requests.length;
      local.requests.push({
        url: req.url ?? "",
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
        socket: req.socket,
      });
      handler(req, res, index);
    });
  };
  const server = tls ? createTlsServer(tls, onRequest) : createServer(onRequest);
  server.on(tls ? "secureConnection" : "connection", (socket: Socket) => {
    local.connections.push({
      socket,
      closed: new Promise((resolve) => socket.once("close", () => resolve())),
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  local.url = `${tls ? "https" : "http"}://127.0.0.1:${port}`;
  return local;
}

function sseHead(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.flushHeaders();
}

function post(url: string, overrides: Partial<SseRequest> = {}): AsyncGenerator<{ data: string }[]> {
  return postSse({
    url,
    headers: { "content-type": "application/json" },
    body: "{}",
    idleTimeoutMs: 30_000,
    ...overrides,
  });
}

async function data(stream: AsyncIterable<{ data: string }[]>): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of stream) for (const message of batch) out.push(message.data);
  return out;
}

async function failure(stream: AsyncIterable<unknown>): Promise<LlmError> {
  try {
    for await (const _ of stream) {
      // read to the end or the error
    }
  } catch (error) {
    if (error instanceof LlmError) return error;
    throw error;
  }
  throw new Error("expected the stream to fail");
}

describe("the request as given", () => {
  it("requests a URL with a path prefix and query exactly as written, headers as named, the body's byte length", async () => {
    const local = await serve((_req, res) => {
      sseHead(res);
      res.end('data: {"ok":true}\n\n');
    });
    const body = JSON.stringify({ text: "héllo 🌍" });
    const url = `${local.url}/openai/deployments/gpt/chat/completions?api-version=2024-10-21&note=a%20b#fragment`;
    const got = await data(
      post(url, { body, headers: { "Content-Type": "application/json", "Api-Key": "k" } }),
    );
    expect(got).toEqual(['{"ok":true}']);
    const [request] = local.requests;
    expect(request?.url).toBe("/openai/deployments/gpt/chat/completions?api-version=2024-10-21&note=a%20b");
    expect(request?.body.toString("utf8")).toBe(body);
    const headers = request?.rawHeaders ?? [];
    expect(headers).toContain("Api-Key");
    expect(headers).toContain("Content-Type");
    expect(headers[headers.indexOf("content-length") + 1]).toBe(String(Buffer.byteLength(body)));
  });

  it("reuses one connection for requests read to their end", async () => {
    const local = await serve((_req, res) => {
      sseHead(res);
      res.end("data: x\n\n");
    });
    expect(await data(post(`${local.url}/v1/chat/completions`))).toEqual(["x"]);
    expect(await data(post(`${local.url}/v1/chat/completions`))).toEqual(["x"]);
    expect(local.requests).toHaveLength(2);
    expect(local.connections).toHaveLength(1);
  });

  it("refuses a URL with credentials without sending anything", async () => {
    const local = await serve((_req, res) => res.end());
    const url = local.url.replace("://", "://user:secret@");
    const error = await failure(post(`${url}/v1/chat/completions`));
    expect(error.code).toBe("TRANSPORT");
    expect(error.message).not.toContain("secret");
    expect(local.requests).toHaveLength(0);
  });
});

describe("M1: redirects are errors, never followed", () => {
  const clients: [string, FetchLike | undefined][] = [
    ["node:http", undefined],
    ["a fetch passed in", (url, init) => fetch(url, init)],
  ];
  for (const [client, fetchLike] of clients) {
    for (const status of [301, 302, 303, 307, 308]) {
      it(`${client}: a ${status} with a Location is TRANSPORT, and the Location is never requested`, async () => {
        const elsewhere = await serve((_req, res) => res.end());
        const local = await serve((_req, res) => {
          res.writeHead(status, { location: `${elsewhere.url}/v1/chat/completions` });
          res.end("moved");
        });
        const error = await failure(
          post(`${local.url}/v1/chat/completions`, fetchLike ? { fetch: fetchLike } : {}),
        );
        expect(error.code).toBe("TRANSPORT");
        expect(error.message).toMatch(/redirect/);
        expect(local.requests).toHaveLength(1);
        expect(elsewhere.requests).toHaveLength(0);
      });
    }
  }
});

describe("no socket is left open or half read", () => {
  it("a consumer that stops early closes the connection; the next request gets a new one", async () => {
    const local = await serve((_req, res, index) => {
      sseHead(res);
      // The first response never ends: only the client can close it.
      if (index === 0) res.write("data: first\n\n");
      else res.end("data: second\n\n");
    });
    for await (const batch of post(`${local.url}/v1/chat/completions`)) {
      expect(batch.map((m) => m.data)).toEqual(["first"]);
      break;
    }
    await local.connections[0]?.closed;
    expect(await data(post(`${local.url}/v1/chat/completions`))).toEqual(["second"]);
    expect(local.connections).toHaveLength(2);
  });

  it("an error body is read up to a bound, classified, and its connection closed", async () => {
    const local = await serve((_req, res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "2" });
      // 128 KiB of an error object that never ends: reading it to the end would never return.
      res.write(`{"error":{"type":"rate_limit_error","message":"slow down ${"x".repeat(128 * 1024)}`);
    });
    const error = await failure(post(`${local.url}/v1/chat/completions`));
    expect(error.code).toBe("RATE_LIMIT");
    expect(error.retryAfterMs).toBe(2000);
    await local.connections[0]?.closed;
  });
});

describe("L7 and M19 on the node:http client", () => {
  it("an abort mid-body ends a pending read at once as ABORTED and closes the connection", async () => {
    const local = await serve((_req, res) => {
      sseHead(res);
      res.write("data: first\n\n");
    });
    const controller = new AbortController();
    const reading = post(`${local.url}/v1/chat/completions`, { signal: controller.signal });
    const first = (await reading.next()).value as { data: string }[];
    expect(first.map((m) => m.data)).toEqual(["first"]);
    // The server sends nothing more: only the abort can end this read.
    const pending = reading.next();
    controller.abort();
    const error = await pending.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).code).toBe("ABORTED");
    await local.connections[0]?.closed;
  });

  it("a silent body is TIMEOUT, not ABORTED, and its connection is closed", async () => {
    const local = await serve((_req, res) => {
      sseHead(res);
      res.write("data: first\n\n");
    });
    const error = await failure(post(`${local.url}/v1/chat/completions`, { idleTimeoutMs: 50 }));
    expect(error.code).toBe("TIMEOUT");
    await local.connections[0]?.closed;
  });
});

describe("UTF-8 across chunks", () => {
  it("a character split between two network chunks decodes whole", async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const globe = Buffer.from("🌍");
    const local = await serve((_req, res) => {
      sseHead(res);
      // The first write ends inside the four bytes of 🌍; the rest is sent only once the client has
      // read the first event, so the two halves cannot arrive as one chunk.
      res.write(Buffer.concat([Buffer.from('data: one\n\ndata: {"t":"'), globe.subarray(0, 2)]));
      void released.then(() => res.end(Buffer.concat([globe.subarray(2), Buffer.from('é"}\n\n')])));
    });
    const got: string[] = [];
    for await (const batch of post(`${local.url}/v1/chat/completions`)) {
      for (const message of batch) got.push(message.data);
      release();
    }
    expect(got).toEqual(["one", '{"t":"🌍é"}']);
  });
});

describe("TLS", () => {
  const openssl = hasOpenssl();
  it.skipIf(!openssl)("https verifies the server's certificate: a self-signed one is TRANSPORT", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bdsh-tls-"));
    try {
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:P-256",
          "-nodes",
          "-keyout",
          join(dir, "key.pem"),
          "-out",
          join(dir, "cert.pem"),
          "-days",
          "1",
          "-subj",
          "/CN=127.0.0.1",
          "-addext",
          "subjectAltName=IP:127.0.0.1",
        ],
        { stdio: "ignore" },
      );
      const local = await serve(
        (_req, res) => {
          sseHead(res);
          res.end("data: x\n\n");
        },
        { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
      );
      const error = await failure(post(`${local.url}/v1/chat/completions`));
      expect(error.code).toBe("TRANSPORT");
      expect(error.message).toMatch(/self[- ]signed/i);
      expect(local.requests).toHaveLength(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
