/** Issue 20 item 5: `bdsh speak TEXT --out FILE.wav` for trying a provider (in process, a local wire server). */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { speakCommand } from "../../src/cli/speech.js";
import { parseWav } from "../../src/tts/pcm.js";
import { pieces, startWireServer, TEST_KEY, type WireServer } from "./wire-servers.js";

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function output() {
  const lines: string[] = [];
  return { lines, out: (t: string) => void lines.push(t), err: (t: string) => void lines.push(t) };
}

function homeWith(yaml: string): { home: string; cwd: string } {
  const home = mkdtempSync(join(tmpdir(), "bdsh-speak-cmd-"));
  const cwd = join(home, "ws");
  mkdirSync(cwd);
  writeFileSync(join(home, "config.yaml"), yaml);
  return { home, cwd };
}

describe("bdsh speak", () => {
  it("writes the provider's audio, sentence by sentence, to a WAV file; the key comes from the environment", async () => {
    server = await startWireServer("openai", { chunks: () => pieces(Buffer.alloc(4800, 1)) });
    const { home, cwd } = homeWith(`tts:\n  provider: openai\n  openai:\n    base_url: ${server.baseUrl}\n`);
    const out = join(cwd, "hello.wav");
    const o = output();
    const code = await speakCommand(
      "Hello there. A second sentence.",
      { out },
      o,
      { BDSH_HOME: home, OPENAI_API_KEY: TEST_KEY },
      cwd,
    );
    expect(code, o.lines.join("\n")).toBe(0);
    const wav = parseWav(readFileSync(out));
    expect(wav?.format).toEqual({ sampleRate: 24_000, channels: 1, sampleWidth: 2 });
    expect(wav?.data.length).toBe(2 * 4800);
    expect(server.requests.map((r) => (r.body as { input: string }).input)).toEqual([
      "Hello there.",
      "A second sentence.",
    ]);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
  });

  it("exits 1 and names the failure without the key when the provider refuses and nothing can speak", async () => {
    server = await startWireServer("openai", { status: 401, errorBody: `{"error":"bad key ${TEST_KEY}"}` });
    const { home, cwd } = homeWith(`tts:\n  provider: openai\n  openai:\n    base_url: ${server.baseUrl}\n`);
    const o = output();
    const code = await speakCommand(
      "Hello.",
      { out: join(cwd, "x.wav") },
      o,
      { BDSH_HOME: home, OPENAI_API_KEY: TEST_KEY, PATH: "/nonexistent" },
      cwd,
    );
    expect(code).toBe(1);
    expect(o.lines.join("\n")).toContain("openai failed before any audio (HTTP)");
    expect(o.lines.join("\n")).not.toContain(TEST_KEY);
  });
});
