/**
 * Issue 20 acceptance: `bdsh run --speak out.wav` against a scripted model server writes a valid WAV whose
 * duration grows with the reply, and the first sentence's audio is in the file before the model's stream
 * has ended. Needs espeak-ng (the local default voice; `.ci/run` installs it): skipped, with that reason in
 * its name, only when the binary is absent.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findBinary } from "../../src/tts/binaries.js";
import { durationOf, parseWav, WAV_HEADER_BYTES } from "../../src/tts/pcm.js";
import { openAiFrames } from "../../testing/fake-provider/openai-frames.js";
import { runCli } from "../support/run-cli.js";

const HAS_ESPEAK = findBinary("espeak-ng", process.env) !== undefined;

type Stamps = { firstAudioSeen?: number; streamEnded?: number; bytesAtEnd?: number };

/** Sends the reply up to just after its first sentence, waits until the WAV has audio, then the rest. */
async function startModel(reply: string, wavPath: string, stamps: Stamps): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", async () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (req.headers["x-bdsh-purpose"] === "title") {
        for (const frame of openAiFrames({ text: "Spoken run" }, "m")) res.write(frame);
        res.end();
        return;
      }
      const frames = openAiFrames({ text: reply, chunkSize: 7 }, "m");
      const firstEnd = reply.indexOf(". ") + 3; // the sentence, its space and one more character
      let sent = "";
      let i = 0;
      for (; i < frames.length && sent.length < firstEnd; i++) {
        res.write(frames[i]);
        const content = /"content":"((?:[^"\\]|\\.)*)"/.exec(frames[i] ?? "")?.[1];
        if (content !== undefined) sent += JSON.parse(`"${content}"`) as string;
      }
      // Wait for a condition, not a time: the first sentence's audio in the file.
      for (let waited = 0; audioBytes(wavPath) === 0 && waited < 600; waited++)
        await new Promise((r) => setTimeout(r, 50));
      stamps.firstAudioSeen = Date.now();
      for (; i < frames.length; i++) res.write(frames[i]);
      stamps.streamEnded = Date.now();
      stamps.bytesAtEnd = audioBytes(wavPath);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

function audioBytes(path: string): number {
  try {
    const bytes = readFileSync(path);
    return bytes.length < WAV_HEADER_BYTES ? 0 : bytes.readUInt32LE(40);
  } catch {
    return 0;
  }
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function speakRun(
  reply: string,
): Promise<{ seconds: number; stamps: Stamps; code: number | null; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), "bdsh-speak-"));
  const wav = join(dir, "out.wav");
  const stamps: Stamps = {};
  const server = await startModel(reply, wav, stamps);
  servers.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const result = await runCli(["run", "--speak", wav, "say", "something"], {
    BDSH_HOME: join(dir, "home"),
    BDSH_BASE_URL: url,
    DEEPSEEK_API_KEY: "sk-test-speak-secret",
  });
  const parsed = parseWav(readFileSync(wav));
  expect(parsed, "out.wav is a WAV file").toBeDefined();
  expect(readFileSync(wav).readUInt32LE(40)).toBe(parsed?.data.length); // the header's length is the data's
  return {
    seconds: durationOf(parsed!.data.length, parsed!.format),
    stamps,
    code: result.code,
    stderr: result.stderr,
  };
}

describe.skipIf(!HAS_ESPEAK)(
  "bdsh run --speak FILE.wav (needs espeak-ng; skipped when it is not installed)",
  () => {
    it("writes the first sentence's audio before the model's stream ends, and a longer reply lasts longer", async () => {
      // The two runs go side by side: each CLI start costs seconds on a loaded machine.
      const [short, long] = await Promise.all([
        speakRun("Hello there. Bye now."),
        speakRun(
          "Hello there. This reply has many more sentences than the short one. Each of them is spoken in turn. The file grows as they are said. And then it ends.",
        ),
      ]);
      expect(short.code, short.stderr).toBe(0);
      expect(short.stamps.bytesAtEnd).toBeGreaterThan(0); // audio was in the file when the stream ended
      expect(short.stamps.firstAudioSeen).toBeLessThanOrEqual(short.stamps.streamEnded!);
      expect(long.code, long.stderr).toBe(0);
      expect(long.stamps.bytesAtEnd).toBeGreaterThan(0);
      expect(long.seconds).toBeGreaterThan(short.seconds);
    });
  },
);
