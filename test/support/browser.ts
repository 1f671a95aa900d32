/**
 * For the dashboard's browser tests (issue 21): the system Chromium through playwright-core, and a load
 * balancer (a TCP proxy) that can fail over from one server to another mid-connection.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import { type Browser, type BrowserContext, chromium } from "playwright-core";

/** `BDSH_CHROMIUM`, else the distribution's `/usr/bin/chromium` (`.ci/run` installs it). */
export function launchChromium(): Promise<Browser> {
  const executablePath = process.env.BDSH_CHROMIUM ?? "/usr/bin/chromium";
  // As root (CI), Chromium's own sandbox cannot start; the page is ours and talks only to loopback.
  return chromium.launch({ executablePath, args: ["--no-sandbox"], headless: true });
}

/**
 * Chromium with an on-disk profile in `dir` (what a person's browser is): for tests of what the dashboard
 * leaves in the profile, where any process of the same user can read it.
 */
export function launchChromiumProfile(dir: string): Promise<BrowserContext> {
  const executablePath = process.env.BDSH_CHROMIUM ?? "/usr/bin/chromium";
  return chromium.launchPersistentContext(dir, { executablePath, args: ["--no-sandbox"], headless: true });
}

/** A load balancer in front of the servers: new connections go to `target`; `fail` drops A's. */
export class Balancer {
  private server: Server | undefined;
  private readonly open = new Map<Socket, string>();
  url = "";
  constructor(public target: string) {}

  async start(): Promise<void> {
    this.server = createServer((client) => {
      const { hostname, port } = new URL(this.target);
      const upstream = connect(Number(port), hostname);
      const target = this.target;
      this.open.set(client, target);
      client.pipe(upstream).pipe(client);
      const close = () => {
        client.destroy();
        upstream.destroy();
        this.open.delete(client);
      };
      client.on("error", close).on("close", close);
      upstream.on("error", close).on("close", close);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.url = `http://localhost:${typeof address === "object" && address ? address.port : 0}`;
  }

  /** The server behind `from` is gone: its connections drop, new ones reach `to`. */
  failOver(from: string, to: string): void {
    this.target = to;
    for (const [socket, target] of this.open) if (target === from) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.open.keys()) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
