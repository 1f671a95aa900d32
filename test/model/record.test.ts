import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  collectReply,
  createAdapter,
  createRecordingAdapter,
  createReplayAdapter,
  readRecording,
  recordingFetch,
} from "../../src/model/index.js";
import { closeFakes, failure, fakeWith, request, routeTo, TEST_ENV, TEST_KEY } from "./support.js";

afterEach(closeFakes);

const tempFile = (): string => join(mkdtempSync(join(tmpdir(), "bdsh-record-")), "session.jsonl");
const ask = request([{ role: "user", text: "go" }]);

describe("record and replay (issue 3, item 7)", () => {
  it("records each raw stream with its request, without the key, and replays it to the same reply", async () => {
    const fake = await fakeWith([
      {
        reasoning: "plan ü",
        text: "first — reply",
        toolCalls: [{ id: "c1", name: "read", arguments: { path: "a" } }],
      },
      { text: "second" },
    ]);
    const file = tempFile();
    const route = routeTo(fake, "deepseek");
    const recorder = createRecordingAdapter(route, file, { env: TEST_ENV });
    const live1 = await collectReply(recorder.stream(ask));
    const live2 = await collectReply(recorder.stream(ask));

    const text = readFileSync(file, "utf8");
    expect(text).not.toContain(TEST_KEY);
    const exchanges = readRecording(file);
    expect(exchanges).toHaveLength(2);
    expect(exchanges[0]).toMatchObject({ v: 1, provider: "deepseek", status: 200, complete: true });
    expect(exchanges[0]?.request.body).toMatchObject({ model: "test-model", stream: true });
    expect(exchanges[0]?.request.headers.authorization).toBeUndefined();

    const replay = createReplayAdapter(exchanges);
    expect(replay.provider).toBe("deepseek");
    expect(await collectReply(replay.stream(ask))).toEqual(live1);
    expect(await collectReply(replay.stream(ask))).toEqual(live2);
    const exhausted = await failure(replay.stream(ask));
    expect(exhausted.code).toBe("INVALID_REQUEST");
  });

  it("replays byte for byte: the recorded body equals what the server sent", async () => {
    const raw = Buffer.from(
      'data: {"choices":[{"index":0,"delta":{"content":"h\u00e9"},"finish_reason":null}]}\n\n' +
        'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
    );
    const fake = await fakeWith([{ raw, rawChunkSizes: [5, 1, 40] }]);
    const file = tempFile();
    const adapter = createRecordingAdapter(routeTo(fake, "openai-compatible"), file, { env: {} });
    await collectReply(adapter.stream(ask));
    expect(Buffer.from(readRecording(file)[0]?.body ?? "", "utf8").equals(raw)).toBe(true);
  });

  it("records error responses and dropped streams, and replays them as the same failures", async () => {
    const fake = await fakeWith([
      { status: 429, headers: { "retry-after": "3" } },
      { text: "cut short", fault: { kind: "drop", afterFrames: 2 } },
    ]);
    const file = tempFile();
    const route = routeTo(fake, "deepseek");
    const recorder = createAdapter(route, { env: TEST_ENV, fetch: recordingFetch(file, "deepseek") });
    const live429 = await failure(recorder.stream(ask));
    const liveDrop = await failure(recorder.stream(ask));
    const exchanges = readRecording(file);
    expect(exchanges.map((e) => [e.status, e.complete])).toEqual([
      [429, true],
      [200, false],
    ]);
    const replay = createReplayAdapter(exchanges);
    const again429 = await failure(replay.stream(ask));
    expect([again429.code, again429.retryAfterMs]).toEqual([live429.code, live429.retryAfterMs]);
    const againDrop = await failure(replay.stream(ask));
    expect([againDrop.code, againDrop.partial]).toEqual([liveDrop.code, liveDrop.partial]);
  });

  it("replays Anthropic recordings through the Anthropic parser", async () => {
    const fake = await fakeWith([{ reasoning: "r", signature: "S", text: "hello" }]);
    const file = tempFile();
    const keyed = createRecordingAdapter(routeTo(fake, "anthropic"), file, { env: TEST_ENV });
    expect(keyed.provider).toBe("anthropic");
    const live = await collectReply(keyed.stream(ask));
    const replayed = await collectReply(createReplayAdapter(readRecording(file)).stream(ask));
    expect(replayed).toEqual(live);
  });
});
