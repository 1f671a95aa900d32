/**
 * What the loop needs from the tool layer: the declarations sent to the model, the L19 class of a call
 * (re-checked just before it starts), whether it may start before the log's flush (L17), and a `run` that
 * always answers (T2: a failing tool never ends the turn). The agent's registry and pipeline implement it
 * (./agent-tools.ts); the loop's own tests and benchmark give a small table of functions instead.
 */
import type { ToolSpec } from "../model/types.js";
import { parseToolArguments } from "../tools/arguments.js";
import type { ConcurrencyClass, ToolCallRequest, ToolExec, ToolOutput } from "../tools/types.js";

export interface ToolHost {
  /** Stable order and content across steps (SP8, M23). */
  declarations(): ToolSpec[];
  concurrencyOf(call: ToolCallRequest): ConcurrencyClass;
  /** L17: true lets the call start without waiting for the log's flush (no effect outside the log). */
  isReadOnly?(call: ToolCallRequest): boolean;
  run(call: ToolCallRequest, exec: ToolExec): Promise<ToolOutput>;
}

/** M9/M15: the call's arguments as an object when they parse to one; the exact string is kept beside it. */
export function toolCallRequest(callId: string, name: string, rawArguments: string): ToolCallRequest {
  return { callId, name, rawArguments, args: parseToolArguments(rawArguments) };
}
