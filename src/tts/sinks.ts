/**
 * Audio sinks (seed 000 streaming-tts.md, "Audio sink"): where PCM goes. A WAV file, raw PCM on standard
 * output, or a local player process when one is installed (`aplay`, `paplay`, `ffplay`, `play` from sox),
 * detected on PATH, never required.
 *
 * Invariants:
 * - `write` resolves when the bytes are accepted (the player's pipe drained, the file written).
 * - The WAV file is valid after every write: its header's lengths are rewritten in place each time, so a
 *   run that is killed still leaves a playable file, and a reader can measure it at any moment.
 * - `interrupt()` drops what is playing at once (the player is killed; the next write starts a new one) and
 *   leaves the sink usable; `close()` waits for the audio to finish and releases everything.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import { findBinary } from "./binaries.js";
import { type PcmFormat, WAV_HEADER_BYTES, wavHeader } from "./pcm.js";

export type AudioSink = {
  readonly format: PcmFormat;
  readonly name: string;
  write(pcm: Uint8Array): Promise<void>;
  interrupt(): void;
  close(): Promise<void>;
};

export class WavFileSink implements AudioSink {
  readonly name = "wav";
  private readonly fd: number;
  private bytes = 0;
  private closed = false;

  constructor(
    readonly path: string,
    readonly format: PcmFormat,
  ) {
    this.fd = openSync(path, "w");
    writeSync(this.fd, wavHeader(format, 0), 0, WAV_HEADER_BYTES, 0);
  }

  async write(pcm: Uint8Array): Promise<void> {
    if (this.closed || pcm.byteLength === 0) return;
    writeSync(this.fd, pcm, 0, pcm.byteLength, WAV_HEADER_BYTES + this.bytes);
    this.bytes += pcm.byteLength;
    writeSync(this.fd, wavHeader(this.format, this.bytes), 0, WAV_HEADER_BYTES, 0);
  }

  interrupt(): void {}

  get dataBytes(): number {
    return this.bytes;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}

/** Raw PCM to a stream (standard output): for piping into another program. */
export class RawPcmSink implements AudioSink {
  readonly name = "pcm";
  constructor(
    readonly format: PcmFormat,
    private readonly out: NodeJS.WritableStream = process.stdout,
  ) {}

  write(pcm: Uint8Array): Promise<void> {
    return new Promise((resolve) => {
      if (this.out.write(pcm)) resolve();
      else this.out.once("drain", () => resolve());
    });
  }

  interrupt(): void {}

  async close(): Promise<void> {}
}

/** Each player's arguments for raw little-endian PCM on standard input. */
const PLAYERS: { binary: string; args: (f: PcmFormat) => string[] }[] = [
  {
    binary: "aplay",
    args: (f) => [
      "-q",
      "-t",
      "raw",
      "-f",
      f.sampleWidth === 2 ? "S16_LE" : "S32_LE",
      "-r",
      `${f.sampleRate}`,
      "-c",
      `${f.channels}`,
    ],
  },
  {
    binary: "paplay",
    args: (f) => [
      "--raw",
      `--format=${f.sampleWidth === 2 ? "s16le" : "s32le"}`,
      `--rate=${f.sampleRate}`,
      `--channels=${f.channels}`,
    ],
  },
  {
    binary: "ffplay",
    args: (f) => [
      "-nodisp",
      "-autoexit",
      "-loglevel",
      "quiet",
      "-f",
      f.sampleWidth === 2 ? "s16le" : "s32le",
      "-ar",
      `${f.sampleRate}`,
      "-ac",
      `${f.channels}`,
      "-i",
      "-",
    ],
  },
  {
    binary: "play",
    args: (f) => [
      "-q",
      "-t",
      "raw",
      "-r",
      `${f.sampleRate}`,
      "-e",
      "signed",
      "-b",
      `${f.sampleWidth * 8}`,
      "-c",
      `${f.channels}`,
      "-",
    ],
  },
];

/** The first installed player, or undefined: a pure probe of PATH. */
export function detectPlayer(
  env: Readonly<Record<string, string | undefined>>,
): { binary: string; path: string } | undefined {
  for (const player of PLAYERS) {
    const path = findBinary(player.binary, env);
    if (path) return { binary: player.binary, path };
  }
  return undefined;
}

export class PlayerSink implements AudioSink {
  readonly name: string;
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly args: string[];

  constructor(
    private readonly player: { binary: string; path: string },
    readonly format: PcmFormat,
    private readonly env: Readonly<Record<string, string | undefined>>,
  ) {
    this.name = player.binary;
    this.args = PLAYERS.find((p) => p.binary === player.binary)?.args(format) ?? [];
  }

  private start(): ChildProcessWithoutNullStreams {
    // The player needs the audio server's variables, never the harness's secrets.
    const keep = ["PATH", "HOME", "XDG_RUNTIME_DIR", "PULSE_SERVER", "DISPLAY", "LANG"];
    const env = Object.fromEntries(keep.flatMap((key) => (this.env[key] ? [[key, this.env[key]]] : [])));
    const child = spawn(this.player.path, this.args, {
      env,
      stdio: ["pipe", "ignore", "ignore"],
    }) as unknown as ChildProcessWithoutNullStreams;
    child.on("error", () => undefined);
    child.stdin.on("error", () => undefined);
    this.child = child;
    return child;
  }

  write(pcm: Uint8Array): Promise<void> {
    const child = this.child ?? this.start();
    return new Promise((resolve) => {
      if (child.stdin.write(pcm)) resolve();
      else {
        child.stdin.once("drain", () => resolve());
        child.once("close", () => resolve());
      }
    });
  }

  interrupt(): void {
    const child = this.child;
    this.child = undefined;
    child?.kill("SIGKILL");
  }

  close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once("close", () => resolve());
      child.stdin.end();
    });
  }
}
