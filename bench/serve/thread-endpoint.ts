/**
 * The minimal HTTP endpoint both peers of the many-sessions bench sit behind (./langgraph-peer.ts and
 * ./floor-server.ts): `POST /threads/:id/messages` `{ text }` runs one turn on the thread and answers with
 * what the turn returned, as JSON, once it has ended (500 with the error's text if it threw). It listens
 * on loopback with the given backlog, prints `listening <url>` for the bench, and on SIGTERM closes its
 * connections, then `close` (the peer's store), then exits.
 */
import { createServer } from "node:http";

export async function serveThreadMessages(options: {
  turn: (thread: string, text: string) => Promise<unknown>;
  backlog: number;
  close: () => Promise<void>;
}): Promise<void> {
  const server = createServer((req, res) => {
    const match = /^\/threads\/([\w-]+)\/messages$/.exec(req.url ?? "");
    if (req.method !== "POST" || !match) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      void (async () => {
        try {
          const { text } = JSON.parse(Buffer.concat(chunks).toString()) as { text: string };
          const answer = await options.turn(match[1]!, text);
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
        } catch (error) {
          res.writeHead(500, { "content-type": "text/plain" }).end(String(error));
        }
      })();
    });
  });
  await new Promise<void>((resolve) =>
    server.listen({ port: 0, host: "127.0.0.1", backlog: options.backlog }, resolve),
  );
  const address = server.address() as { port: number };
  process.stdout.write(`listening http://127.0.0.1:${address.port}\n`);
  process.once("SIGTERM", () => {
    server.closeAllConnections();
    server.close();
    void options.close().finally(() => process.exit(0));
  });
}
