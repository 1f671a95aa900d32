import { sanitize } from "./render/terminal-text.js";

/** Where the CLI writes: stdout for results (JSON Lines with `--json`), stderr for progress and errors. */
export type Output = { out(line: string): void; err(line: string): void };

/**
 * `output` for a human view whose lines quote stored or model-made text (titles, replies, tool output, file
 * names, errors): every line passes the one sanitiser. Never for `--json`, which prints events as stored.
 */
export function humanOutput(output: Output): Output {
  return { out: (line) => output.out(sanitize(line)), err: (line) => output.err(sanitize(line)) };
}

export const processOutput: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/**
 * `bdsh sessions events ID | head` closes the pipe early. A write to a closed stdout or stderr
 * then fails with EPIPE; the reader has all it wanted, so the process ends at once, without a stack trace
 * (exit 0 for stdout, as `yes | head` does; the session's log is durable either way).
 */
export function endQuietlyOnBrokenPipe(): void {
  let ending = false;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
      if (ending) return;
      ending = true;
      // A running agent is cancelled and closed first, so its session is not left `running` (`run --json
      // | head`); bounded, so a stuck close never keeps the process alive.
      const cleanups = [...brokenPipeCleanups].map((cleanup) => cleanup().catch(() => undefined));
      const bound = new Promise((resolve) => setTimeout(resolve, BROKEN_PIPE_CLEANUP_MS).unref());
      void Promise.race([Promise.all(cleanups), bound]).then(() => process.exit(0));
    });
  }
}

const BROKEN_PIPE_CLEANUP_MS = 5_000;
const brokenPipeCleanups = new Set<() => Promise<unknown>>();

/** Runs `cleanup` before the process ends on a broken pipe; returns how to take it back. */
export function onBrokenPipe(cleanup: () => Promise<unknown>): () => void {
  brokenPipeCleanups.add(cleanup);
  return () => brokenPipeCleanups.delete(cleanup);
}
