/**
 * The floor: no harness at all. A plain `fetch` loop POSTs, in order, the exact request bodies better-dsh
 * sent in its SQLite session (so the same growing bytes) to a fresh fake provider with the same script, and
 * reads each stream whole. Whatever a harness spends per step beyond this is its overhead.
 */
import { type FakeReply, type FakeRequest, startFakeProvider } from "../../testing/fake-provider/index.js";
import { type SessionRun, StepMarks } from "./common.js";

export async function runFloor(
  script: readonly FakeReply[],
  sent: readonly FakeRequest[],
): Promise<SessionRun> {
  const fake = await startFakeProvider({ script });
  try {
    const marks = new StepMarks();
    for (const request of sent) {
      marks.mark();
      const res = await fetch(`${fake.url}${request.path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer x" },
        body: request.rawBody,
      });
      const text = await res.text();
      if (!res.ok || !text.includes("[DONE]")) throw new Error(`floor: request failed (${res.status})`);
    }
    return { marks, requests: fake.requests.length };
  } finally {
    await fake.close();
  }
}
