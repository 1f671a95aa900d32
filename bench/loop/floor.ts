/**
 * The floor: no harness at all. A plain `fetch` loop POSTs, in order, the exact request bodies better-dsh
 * sent in its SQLite session (so the same growing bytes) to a fresh fake provider with the same script, and
 * reads each stream whole. Whatever a harness spends per step beyond this is its overhead.
 *
 * `node-http`: the same loop over `node:http` with a keep-alive agent, the client better-dsh itself uses
 * (src/model/node-post.ts). A diagnostic row: cheaper than `fetch`, it shows how much of "under the fetch
 * floor" is only the cheaper client.
 */
import { Agent, request as httpRequest } from "node:http";
import { type FakeReply, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { type SessionRun, StepMarks } from "./common.js";

export type FloorClient = "fetch" | "node-http";

export async function runFloor(
  script: readonly FakeReply[],
  sent: readonly FakeRequest[],
  client: FloorClient = "fetch",
): Promise<SessionRun> {
  const fake = await startFakeProvider({ script });
  const agent = new Agent({ keepAlive: true });
  try {
    const marks = new StepMarks();
    for (const request of sent) {
      marks.mark();
      const url = `${fake.url}${request.path}`;
      const { status, text } =
        client === "fetch"
          ? await viaFetch(url, request.rawBody)
          : await viaNodeHttp(agent, url, request.rawBody);
      if (status !== 200 || !text.includes("[DONE]")) throw new Error(`floor: request failed (${status})`);
    }
    return { marks, requests: fake.requests.length };
  } finally {
    agent.destroy();
    await fake.close();
  }
}

const HEADERS = { "content-type": "application/json", authorization: "Bearer x" };

async function viaFetch(url: string, body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: "POST", headers: HEADERS, body });
  return { status: res.status, text: await res.text() };
}

function viaNodeHttp(agent: Agent, url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: "POST", agent, headers: { ...HEADERS, "content-length": Buffer.byteLength(body) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
