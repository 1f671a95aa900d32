/**
 * The harness's HTTP(S) forward proxy for `sandbox_network: proxy` (sandbox-network.ts): it listens on a
 * unix socket outside every command's network namespace and forwards only to allowed hosts.
 *
 * Invariants:
 * - Two request forms: `CONNECT host:port` (HTTPS and any TLS; the bytes are tunnelled, never read) and an
 *   absolute-form request (`GET http://host:port/path`, plain HTTP). An origin-form request (`GET /path`)
 *   names no host and is refused with 400.
 * - A host not on the list is refused with 403 and `proxyRefusalText` as the body, before any connection
 *   or name lookup is made for it.
 * - `Proxy-*` headers are not forwarded. A failed upstream connection is 502 with the reason.
 * - The socket lives in a directory of mode 0700 (under `$BDSH_HOME` when it is short enough, which every
 *   sandbox masks, so only the sandboxes the socket is bound into can reach it); `close()` ends every open
 *   connection and removes the directory.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { hostAllowed, proxyRefusalText } from "./sandbox-network.js";

/** A unix socket path must fit `sun_path` (108 bytes with its NUL on Linux). */
const MAX_SOCKET_PATH = 100;

export class EgressProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket | Duplex>();
  private dir: string | undefined;

  constructor(
    private readonly allow: readonly string[],
    /** Where the socket's directory is made: `$BDSH_HOME/run` when given and short enough. */
    private readonly home?: string,
  ) {}

  /**
   * Starts listening (once) and returns the socket's path. A unix socket is bound before `listen` returns,
   * so a command started right after can connect; a failure to listen shows up as a refused connection.
   */
  listen(): string {
    if (this.server && this.dir) return join(this.dir, "proxy.sock");
    this.dir = this.socketDirectory();
    const path = join(this.dir, "proxy.sock");
    const server = createServer((req, res) => this.forward(req, res));
    server.on("connect", (req: IncomingMessage, client: Duplex, head: Buffer) =>
      this.tunnel(req, client, head),
    );
    server.on("connection", (socket: Socket) => this.track(socket));
    server.on("clientError", (_error, socket) => socket.destroy());
    server.on("error", () => {});
    server.listen(path);
    this.server = server;
    return path;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }

  private socketDirectory(): string {
    if (this.home) {
      const run = join(this.home, "run");
      if (run.length + "/proxy-XXXXXX/proxy.sock".length <= MAX_SOCKET_PATH) {
        try {
          mkdirSync(run, { recursive: true, mode: 0o700 });
          return mkdtempSync(join(run, "proxy-"));
        } catch {
          // An unwritable home: the temporary directory below still works.
        }
      }
    }
    return mkdtempSync(join(tmpdir(), "bdsh-proxy-"));
  }

  private track(socket: Socket | Duplex): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
  }

  private tunnel(req: IncomingMessage, client: Duplex, head: Buffer): void {
    this.track(client);
    client.on("error", () => client.destroy());
    const target = parseAuthority(req.url ?? "");
    if (!target) {
      client.end("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n\r\nCONNECT needs host:port\n");
      return;
    }
    if (!hostAllowed(this.allow, target.host, target.port)) {
      const body = `${proxyRefusalText(target.host, target.port, this.allow)}\n`;
      client.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    const upstream = connect(target.port, target.host);
    this.track(upstream);
    let connected = false;
    upstream.once("connect", () => {
      connected = true;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once("error", (error) => {
      if (!connected && client.writable) {
        client.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n\r\n${error.message}\n`);
      } else {
        client.destroy();
      }
    });
    client.once("close", () => upstream.destroy());
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res
        .writeHead(400, { "Content-Type": "text/plain" })
        .end("a proxy request needs an absolute http:// URL\n");
      return;
    }
    if (url.protocol !== "http:") {
      res
        .writeHead(400, { "Content-Type": "text/plain" })
        .end("only http:// is forwarded; use CONNECT for TLS\n");
      return;
    }
    const port = url.port === "" ? 80 : Number(url.port);
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    if (!hostAllowed(this.allow, host, port)) {
      res
        .writeHead(403, { "Content-Type": "text/plain" })
        .end(`${proxyRefusalText(host, port, this.allow)}\n`);
      return;
    }
    const headers = { ...req.headers };
    for (const name of Object.keys(headers)) if (name.startsWith("proxy-")) delete headers[name];
    const upstream = request(
      { host, port, method: req.method, path: `${url.pathname}${url.search}`, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.once("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "Content-Type": "text/plain" });
      res.end(`${error.message}\n`);
    });
    req.pipe(upstream);
  }
}

/** `host:port` or `[v6]:port` of a CONNECT request. */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: (match[1] ?? match[2])!, port };
}
