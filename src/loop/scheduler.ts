/**
 * L19: runs one step's tool calls.
 *
 * - Calls start in model order. Consecutive `safe` calls share a rolling pool of `maxParallel`; an
 *   `exclusive` call waits for everything running, runs alone, and everything after waits for it.
 * - A call's class is asked just before it starts (it may depend on state changed by earlier calls).
 * - Before each dispatch `beforeDispatch` runs (L17: it records the call as started and, unless the call is
 *   read-only, flushes). If the signal aborted by then, the call and every later one are left undispatched
 *   (L8 closes them).
 * - Results are committed in model order: a call that finishes early waits for the ones before it.
 */
import type { ToolCallBlock } from "../log/messages.js";
import type { ConcurrencyClass, ToolOutput } from "../tools/types.js";

export type BatchOptions = {
  calls: readonly ToolCallBlock[];
  maxParallel: number;
  signal: AbortSignal;
  classOf(call: ToolCallBlock): ConcurrencyClass;
  beforeDispatch(call: ToolCallBlock): Promise<void>;
  run(call: ToolCallBlock): Promise<ToolOutput>;
  /** Called once per dispatched call, in model order. */
  commit(call: ToolCallBlock, output: ToolOutput): void;
};

export type BatchResult = {
  /** Calls never dispatched because the signal aborted, in model order (always a suffix). */
  undispatched: ToolCallBlock[];
};

export async function runToolBatch(options: BatchOptions): Promise<BatchResult> {
  const { calls } = options;
  const outputs: Array<ToolOutput | undefined> = new Array(calls.length);
  let committed = 0;
  const running = new Set<Promise<void>>();
  let dispatched = 0;
  let failed = false;

  const commitReady = () => {
    while (!failed && committed < dispatched && outputs[committed] !== undefined) {
      options.commit(calls[committed]!, outputs[committed]!);
      committed++;
    }
  };

  try {
    await dispatchAll();
  } catch (error) {
    // L9: the step failed; calls still running are aborted by the caller and their results are not
    // committed (the caller closes them as outcome unknown).
    failed = true;
    throw error;
  }
  await Promise.all(running);
  commitReady();
  return { undispatched: calls.slice(dispatched) };

  async function dispatchAll(): Promise<void> {
    for (let index = 0; index < calls.length; index++) {
      const call = calls[index]!;
      if (options.signal.aborted) break;
      const kind = options.classOf(call);
      if (kind === "exclusive") await Promise.all(running);
      else while (running.size >= Math.max(1, options.maxParallel)) await Promise.race(running);
      if (options.signal.aborted) break;
      // Once recorded as started the call is dispatched; `run` answers "aborted before dispatch" itself if the
      // signal fired during the flush (L17).
      await options.beforeDispatch(call);
      dispatched = index + 1;
      const task = options
        .run(call)
        .catch(
          (error: unknown): ToolOutput => ({
            text: `Error: ${messageOf(error)}`,
            isError: true,
            code: "TOOL_ERROR",
          }),
        )
        .then((output) => {
          outputs[index] = output;
          commitReady();
        });
      const tracked = task.finally(() => running.delete(tracked));
      running.add(tracked);
      if (kind === "exclusive") await tracked;
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
