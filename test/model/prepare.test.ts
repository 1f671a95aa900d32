/**
 * `ModelAdapter.prepare`: a request's checks and body made ahead (the loop overlaps them with its flush,
 * L17), sending nothing; `stream` of the same request then sends exactly what it would have sent anyway.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SurfaceMessage } from "../../src/log/messages.js";
import { adapterFor, closeFakes, drain, failure, fakeWith, request } from "./support.js";

afterEach(closeFakes);

const history: SurfaceMessage[] = [{ role: "user", text: "Read a.txt." }];

describe("adapter prepare", () => {
  it("sends nothing, and the stream then sends the same bytes as an unprepared request", async () => {
    const fake = await fakeWith([{ text: "one" }, { text: "two" }]);
    const adapter = adapterFor(fake, "deepseek");
    const first = request(history);
    adapter.prepare?.(first);
    expect(fake.requests).toHaveLength(0);
    await drain(adapter.stream(first));
    const again = adapterFor(fake, "deepseek");
    await drain(again.stream(request(history)));
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]!.rawBody).toBe(fake.requests[1]!.rawBody);
  });

  it("does not throw what it finds: the stream fails with it, from its iterator, and sends nothing", async () => {
    const fake = await fakeWith([{ text: "never sent" }]);
    const adapter = adapterFor(fake, "deepseek");
    const unanswered = request([
      ...history,
      { role: "assistant", blocks: [{ type: "tool-call", id: "c1", name: "read", arguments: "{}" }] },
    ]);
    expect(() => adapter.prepare?.(unanswered)).not.toThrow();
    const error = await failure(adapter.stream(unanswered));
    expect(error.code).toBe("INVALID_REQUEST");
    expect(fake.requests).toHaveLength(0);
  });
});
