/**
 * The terminal surfaces of speech: `bdsh speak TEXT [--out FILE.wav]` to try a provider,
 * `bdsh run --speak [FILE.wav]` and `bdsh chat --voice` to hear replies as they stream.
 *
 * Invariants:
 * - One `SpeechStream` per agent on one sink: replies are spoken in order, a turn's end flushes its last
 *   sentence, and a stop (Ctrl-C cancels the turn; a steer) interrupts the audio at once.
 * - A player is used only when one is installed; without one, `--speak` needs a file and says so.
 * - Warnings name providers and config keys, never credentials.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { loadConfig } from "../config/load.js";
import { bdshHome } from "../config/paths.js";
import type { Config } from "../config/schema.js";
import type { HookBus } from "../hooks/hook-bus.js";
import { followAgentTurns, type SpeakingAgent } from "../tts/agent-turns.js";
import { int16Mono, type PcmFormat } from "../tts/pcm.js";
import { builtinTtsRegistry, planSpeech, type SpeechPlan } from "../tts/registry.js";
import { type AudioSink, detectPlayer, PlayerSink, RawPcmSink, WavFileSink } from "../tts/sinks.js";
import { SpeechStream, type TtsReport } from "../tts/speech-stream.js";
import { addSharedOptions } from "./shared-options.js";

type Output = { out(text: string): void; err(text: string): void };
type Env = Readonly<Record<string, string | undefined>>;

export function describeReport(report: TtsReport): string {
  switch (report.kind) {
    case "capped":
      return `${report.provider}: a sentence's audio was cut at ${report.bytes} bytes`;
    case "fallback":
      return `${report.provider} failed before any audio (${report.code}); speaking sentence by sentence instead: ${report.message}`;
    case "failed":
      return `${report.provider} failed (${report.code}): ${report.message}`;
    case "silent":
      return report.message;
  }
}

function planFor(config: Config, env: Env): SpeechPlan {
  return planSpeech(builtinTtsRegistry(), { config: config.tts, env, fetch: globalThis.fetch });
}

function sinkFormat(plan: SpeechPlan): PcmFormat {
  return plan.streamer?.format ?? plan.sync?.format ?? int16Mono(24_000);
}

/** A WAV file when `target` names one; else the local player, or undefined when none is installed. */
function openSink(target: string | true, format: PcmFormat, env: Env, cwd: string): AudioSink | undefined {
  if (typeof target === "string") return new WavFileSink(resolve(cwd, target), format);
  const player = detectPlayer(env);
  return player ? new PlayerSink(player, format, env) : undefined;
}

const NO_PLAYER =
  "bdsh: warning: speech: no audio player found (aplay, paplay, ffplay or sox's play); give a file: --speak out.wav";

/**
 * Speaks an agent's replies when the command's options ask for it (`speak` of `run`, `voice` of `chat`).
 * The one wiring line of each command; returns the stream (for tests), or undefined when not asked.
 */
export function speakAgentReplies(
  agent: SpeakingAgent & { hooks: Pick<HookBus, "onSerial"> },
  options: object,
  context: { config: Config; env: Env; cwd?: string; output: Output },
): SpeechStream | undefined {
  const asked = options as { speak?: string | boolean; voice?: boolean };
  const target =
    typeof asked.speak === "string" ? asked.speak : asked.speak || asked.voice ? true : undefined;
  if (target === undefined) return undefined;
  const plan = planFor(context.config, context.env);
  for (const note of plan.notes) context.output.err(`bdsh: warning: speech: ${note}`);
  const sink = openSink(target, sinkFormat(plan), context.env, context.cwd ?? process.cwd());
  if (!sink) {
    context.output.err(NO_PLAYER);
    return undefined;
  }
  const speech = new SpeechStream({
    plan,
    sink,
    maxChunkChars: context.config.tts.max_chunk_chars,
    maxBodyBytes: context.config.tts.max_body_bytes,
    onReport: (report) => context.output.err(`bdsh: warning: speech: ${describeReport(report)}`),
  });
  const stopFollowing = followAgentTurns(agent, {
    startTurn: () => undefined,
    delta: (_turn, text) => speech.push(text),
    stop: () => speech.interrupt(),
    endTurn: () => speech.flush(),
  });
  // Closing the agent (the end of `run`, a chat's session switch) waits until the last sentence is in the sink.
  agent.hooks.onSerial("agent/close", async () => {
    stopFollowing();
    await speech.end();
    await sink.close();
  });
  return speech;
}

/** `bdsh speak TEXT [--out FILE.wav] [--pcm]`, `--speak [FILE]` on `run`, `--voice` on `chat`. */
export function registerSpeech(program: Command, output: Output, setExitCode: (code: number) => void): void {
  program.commands
    .find((c) => c.name() === "run")
    ?.option(
      "--speak [file]",
      "speak the reply as it streams: to FILE.wav, else through a local audio player",
    );
  program.commands
    .find((c) => c.name() === "chat")
    ?.option("--voice", "speak replies through a local audio player");
  addSharedOptions(program.command("speak"))
    .description("say TEXT with the configured voice (tts.provider, tts.streaming.provider)")
    .argument("<text...>", "what to say")
    .option("--out <file>", "write a WAV file instead of playing")
    .option("--pcm", "write raw PCM to standard output")
    .option("--tts <name>", "use this TTS provider (overrides tts.provider and tts.streaming.provider)")
    .action(
      async (words: string[], options: { out?: string; pcm?: boolean; tts?: string }, command: Command) => {
        const globals = command.optsWithGlobals<{ config?: string; cwd?: string }>();
        const cwd = resolve(globals.cwd ?? process.cwd());
        const speak: SpeakOptions = {
          ...(options.out ? { out: options.out } : {}),
          ...(options.pcm ? { pcm: true } : {}),
          ...(options.tts ? { provider: options.tts } : {}),
          ...(globals.config ? { configFile: globals.config } : {}),
        };
        setExitCode(await speakCommand(words.join(" "), speak, output, process.env, cwd));
      },
    );
}

type SpeakOptions = { out?: string; pcm?: boolean; provider?: string; configFile?: string };

export async function speakCommand(
  text: string,
  options: SpeakOptions,
  output: Output,
  env: Env = process.env,
  cwd: string = process.cwd(),
): Promise<number> {
  const { config } = loadConfig({
    home: bdshHome(env as NodeJS.ProcessEnv),
    cwd,
    env: env as NodeJS.ProcessEnv,
    ...(options.configFile ? { configFile: options.configFile } : {}),
  });
  const tts = options.provider ? { ...config.tts, provider: options.provider, streaming: {} } : config.tts;
  let plan: SpeechPlan;
  try {
    plan = planFor({ ...config, tts }, env);
  } catch (error) {
    output.err(`bdsh: USAGE: ${(error as Error).message}`);
    return 2;
  }
  for (const note of plan.notes) output.err(`bdsh: warning: speech: ${note}`);
  const format = sinkFormat(plan);
  const sink = options.pcm ? new RawPcmSink(format) : openSink(options.out ?? true, format, env, cwd);
  if (!sink) {
    output.err(
      "bdsh: USAGE: no audio player found (aplay, paplay, ffplay or sox's play); use --out FILE.wav",
    );
    return 2;
  }
  let failed = false;
  const speech = new SpeechStream({
    plan,
    sink,
    maxChunkChars: tts.max_chunk_chars,
    maxBodyBytes: tts.max_body_bytes,
    onReport: (report) => {
      if (report.kind !== "capped" && report.kind !== "fallback") failed = true;
      output.err(`bdsh: warning: speech: ${describeReport(report)}`);
    },
  });
  const onSignal = () => void speech.stop();
  process.once("SIGINT", onSignal);
  try {
    speech.push(text);
    const outcome = await speech.end();
    await sink.close();
    if (options.out && !failed)
      output.err(`wrote ${options.out} (${outcome.sentences} sentences, ${outcome.bytes} bytes of audio)`);
    return failed || !outcome.heard ? 1 : 0;
  } finally {
    process.off("SIGINT", onSignal);
  }
}
