/**
 * M8: the strict tool-call/result pairing check, run before any request is sent. Providers reject a
 * history with a call that has no result (or the reverse) with an opaque 400; this names the exact fault.
 *
 * Rules, over the model-visible messages in order:
 * - every tool-call id is unique in the whole history;
 * - a tool result answers a call of the assistant message directly before the run of results it is in;
 * - an assistant message's calls are all answered before the next non-result message;
 * - the history does not end with unanswered calls.
 */
import { type SurfaceMessage, toolCallsOf } from "./messages.js";
import { startsWithSame } from "./prefix.js";

export type PairingErrorCode =
  | "DUPLICATE_TOOL_CALL_ID"
  | "TOOL_RESULT_WITHOUT_CALL"
  | "TOOL_CALLS_NEED_IMMEDIATE_RESULTS"
  | "UNRESOLVED_TOOL_CALLS";

export abstract class PairingError extends Error {
  abstract readonly code: PairingErrorCode;
  constructor(
    message: string,
    /** Index of the offending message in the checked list. */
    readonly index: number,
    readonly callIds: readonly string[],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class DuplicateToolCallIdError extends PairingError {
  readonly code = "DUPLICATE_TOOL_CALL_ID";
  constructor(index: number, callId: string) {
    super(`duplicate tool call id "${callId}" (message ${index})`, index, [callId]);
  }
}

export class ToolResultWithoutCallError extends PairingError {
  readonly code = "TOOL_RESULT_WITHOUT_CALL";
  constructor(index: number, callId: string) {
    super(`tool result "${callId}" has no matching call (message ${index})`, index, [callId]);
  }
}

export class ToolCallsNeedImmediateResultsError extends PairingError {
  readonly code = "TOOL_CALLS_NEED_IMMEDIATE_RESULTS";
  constructor(index: number, callIds: string[]) {
    super(
      `tool calls need immediate results: ${quoteAll(callIds)} unanswered before message ${index}`,
      index,
      callIds,
    );
  }
}

export class UnresolvedToolCallsError extends PairingError {
  readonly code = "UNRESOLVED_TOOL_CALLS";
  constructor(index: number, callIds: string[]) {
    super(`history ends with unresolved tool calls: ${quoteAll(callIds)}`, index, callIds);
  }
}

function quoteAll(ids: string[]): string {
  return ids.map((id) => `"${id}"`).join(", ");
}

/** Returns the first pairing fault, or undefined when the history is well formed. */
export function findPairingError(messages: readonly SurfaceMessage[]): PairingError | undefined {
  const scan = new PairingScan();
  return scan.feed(messages, 0) ?? scan.end(messages.length);
}

/**
 * M8 for a history that grows at its end, as the loop's requests do: a check scans only the messages after
 * the ones the previous check passed, when the list still starts with those same message objects (an
 * identity compare); any other list (compaction replaced a range, another session) is scanned whole.
 */
export class PairingChecker {
  private passed: readonly SurfaceMessage[] = [];
  private scan = new PairingScan();
  private passedIds: CallIds = NO_CALL_IDS;

  check(messages: readonly SurfaceMessage[]): PairingError | undefined {
    if (!startsWithSame(messages, this.passed)) {
      this.passed = [];
      this.scan = new PairingScan();
    }
    const error = this.scan.feed(messages, this.passed.length) ?? this.scan.end(messages.length);
    if (error) {
      this.passed = [];
      this.scan = new PairingScan();
      this.passedIds = NO_CALL_IDS;
      return error;
    }
    this.passed = messages.slice();
    this.passedIds = this.scan.idsSoFar();
    return undefined;
  }

  /**
   * Every tool-call id of the history the last `check` passed (none after a failed one), as of that check:
   * a later check that extends the same history adds ids the returned set does not show.
   */
  callIds(): CallIds {
    return this.passedIds;
  }
}

/** A set of tool-call ids, as far as a reply's assembler asks (`has`). */
export type CallIds = { has(id: string): boolean };

const NO_CALL_IDS: CallIds = new Set<string>();

/** The rules of the header, message by message; the state after a prefix is the state to continue from. */
class PairingScan {
  /** Each id seen, with the order it came in (`idsSoFar` reads the first n). */
  private readonly seen = new Map<string, number>();
  /** Calls of the latest assistant message still waiting for a result, in model order. */
  private pending: string[] = [];
  private answerable = new Set<string>();

  feed(messages: readonly SurfaceMessage[], from: number): PairingError | undefined {
    for (let i = from; i < messages.length; i++) {
      const message = messages[i]!;
      if (message.role === "tool") {
        if (!this.answerable.has(message.callId)) return new ToolResultWithoutCallError(i, message.callId);
        this.answerable.delete(message.callId);
        this.pending = this.pending.filter((id) => id !== message.callId);
        continue;
      }
      if (this.pending.length > 0) return new ToolCallsNeedImmediateResultsError(i, this.pending);
      this.answerable = new Set();
      for (const call of toolCallsOf(message)) {
        if (this.seen.has(call.id)) return new DuplicateToolCallIdError(i, call.id);
        this.seen.set(call.id, this.seen.size);
        this.pending.push(call.id);
        this.answerable.add(call.id);
      }
    }
    return undefined;
  }

  /** The ids seen so far; ids fed later are not in it (they were numbered from its size on). */
  idsSoFar(): CallIds {
    const seen = this.seen;
    const count = seen.size;
    return { has: (id) => (seen.get(id) ?? count) < count };
  }

  /** The history may not end with unanswered calls. */
  end(length: number): PairingError | undefined {
    return this.pending.length > 0 ? new UnresolvedToolCallsError(length - 1, this.pending) : undefined;
  }
}
