/**
 * `espeak`: the local, offline default, a sync provider: `espeak-ng --stdout` renders one
 * sentence to a WAV whose samples are returned whole; the dispatcher plays sentence by sentence.
 *
 * Invariants:
 * - The text goes to the child's standard input, never its arguments (a sentence starting with `-` must not
 *   become an option). The child gets only `PATH`, `HOME` and the locale, no secrets.
 * - Abort kills the child at once. Output is bounded by `tts.max_body_bytes`.
 */
import { spawn } from "node:child_process";
import { findBinary } from "../binaries.js";
import { int16Mono, parseWav } from "../pcm.js";
import { type ProviderContext, type SyncTtsProvider, TtsError } from "../provider.js";

const BINARIES = ["espeak-ng", "espeak"];

export function espeakProvider(context: ProviderContext): SyncTtsProvider {
  const binary = () =>
    BINARIES.map((name) => findBinary(name, context.env)).find((path) => path !== undefined);
  const settings = context.config.espeak;
  return {
    name: "espeak",
    kind: "sync",
    format: int16Mono(22_050),
    available: () => binary() !== undefined,
    synthesize(text, signal) {
      const path = binary();
      if (!path)
        return Promise.reject(new TtsError("NOT_INSTALLED", "espeak: espeak-ng is not installed", "espeak"));
      const args = [
        "--stdout",
        ...(settings.voice ? ["-v", settings.voice] : []),
        ...(settings.speed ? ["-s", String(settings.speed)] : []),
      ];
      const env = Object.fromEntries(
        ["PATH", "HOME", "LANG", "LC_ALL"].flatMap((key) =>
          context.env[key] ? [[key, context.env[key]]] : [],
        ),
      );
      return new Promise((resolve, reject) => {
        const child = spawn(path, args, { env, stdio: ["pipe", "pipe", "pipe"], signal });
        const chunks: Buffer[] = [];
        let size = 0;
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > context.config.max_body_bytes + 1024) child.kill("SIGKILL");
          else chunks.push(chunk);
        });
        child.stderr.on("data", (chunk: Buffer) => {
          stderr = (stderr + chunk.toString()).slice(-400);
        });
        child.on("error", (error) => {
          reject(
            signal.aborted
              ? new TtsError("ABORTED", "espeak: stopped", "espeak")
              : new TtsError("PROCESS", `espeak: ${error.message}`, "espeak"),
          );
        });
        child.on("close", (code) => {
          if (signal.aborted) return reject(new TtsError("ABORTED", "espeak: stopped", "espeak"));
          const wav = parseWav(Buffer.concat(chunks));
          if (code !== 0 && !wav)
            return reject(new TtsError("PROCESS", `espeak: exited ${code}: ${stderr.trim()}`, "espeak"));
          if (!wav) return reject(new TtsError("MALFORMED", "espeak: the output was not a WAV", "espeak"));
          resolve({ format: wav.format, pcm: wav.data });
        });
        child.stdin.on("error", () => undefined);
        child.stdin.end(text);
      });
    },
  };
}
