import { describe, expect, it } from "vitest";
import type { SurfaceMessage } from "../../src/log/messages.js";
import {
  DuplicateToolCallIdError,
  findPairingError,
  PairingChecker,
  ToolCallsNeedImmediateResultsError,
  ToolResultWithoutCallError,
  UnresolvedToolCallsError,
} from "../../src/log/pairing.js";

const call = (id: string, name = "read"): SurfaceMessage => ({
  role: "assistant",
  blocks: [{ type: "tool-call", id, name, arguments: "{}" }],
});
const calls = (...ids: string[]): SurfaceMessage => ({
  role: "assistant",
  blocks: ids.map((id) => ({ type: "tool-call" as const, id, name: "read", arguments: "{}" })),
});
const result = (callId: string): SurfaceMessage => ({ role: "tool", callId, name: "read", text: "ok" });
const user = (text = "hi"): SurfaceMessage => ({ role: "user", text });
const system: SurfaceMessage = { role: "system", text: "sys" };

describe("M8 pairing check", () => {
  it("accepts a well-formed history with parallel calls answered in any order", () => {
    expect(
      findPairingError([system, user(), calls("a", "b"), result("b"), result("a"), user("next")]),
    ).toBeUndefined();
  });

  it("accepts an empty history and assistant text without calls", () => {
    expect(findPairingError([])).toBeUndefined();
    expect(
      findPairingError([user(), { role: "assistant", blocks: [{ type: "text", text: "done" }] }]),
    ).toBeUndefined();
  });

  it("names a duplicate tool call id", () => {
    const error = findPairingError([user(), call("a"), result("a"), call("a"), result("a")]);
    expect(error).toBeInstanceOf(DuplicateToolCallIdError);
    expect(error?.code).toBe("DUPLICATE_TOOL_CALL_ID");
    expect(error?.message).toContain('duplicate tool call id "a"');
    expect(error?.index).toBe(3);
  });

  it("names a result without its call", () => {
    const error = findPairingError([user(), result("x")]);
    expect(error).toBeInstanceOf(ToolResultWithoutCallError);
    expect(error?.message).toContain('tool result "x" has no matching call');
  });

  it("rejects a second result for the same call", () => {
    const error = findPairingError([user(), call("a"), result("a"), result("a")]);
    expect(error).toBeInstanceOf(ToolResultWithoutCallError);
  });

  it("rejects a result for a call of an earlier assistant message", () => {
    const error = findPairingError([user(), call("a"), result("a"), call("b"), result("a")]);
    expect(error).toBeInstanceOf(ToolResultWithoutCallError);
  });

  it("names calls not immediately followed by their results", () => {
    const error = findPairingError([user(), calls("a", "b"), result("a"), user("steer"), result("b")]);
    expect(error).toBeInstanceOf(ToolCallsNeedImmediateResultsError);
    expect(error?.callIds).toEqual(["b"]);
    expect(error?.message).toContain("tool calls need immediate results");
  });

  it("names a history ending with unresolved calls", () => {
    const error = findPairingError([user(), calls("a", "b"), result("b")]);
    expect(error).toBeInstanceOf(UnresolvedToolCallsError);
    expect(error?.callIds).toEqual(["a"]);
    expect(error?.message).toContain("history ends with unresolved tool calls");
  });
});

describe("M8 pairing check over a growing history (PairingChecker)", () => {
  it("checks each request's news and still finds a fault that spans the old part", () => {
    const checker = new PairingChecker();
    const history: SurfaceMessage[] = [system, user(), call("a"), result("a")];
    expect(checker.check(history)).toBeUndefined();
    history.push(call("b"), result("b"));
    expect(checker.check(history)).toBeUndefined();
    // A new call reusing an id from the part already passed.
    expect(checker.check([...history, call("a")])).toBeInstanceOf(DuplicateToolCallIdError);
    // An unanswered call at the end, then its answer: the failed check left nothing behind.
    expect(checker.check([...history, call("c")])).toBeInstanceOf(UnresolvedToolCallsError);
    expect(checker.check([...history, call("c"), result("c")])).toBeUndefined();
  });

  it("scans a list whole when it no longer starts with the messages it passed", () => {
    const checker = new PairingChecker();
    const first = [system, user(), call("a"), result("a")];
    expect(checker.check(first)).toBeUndefined();
    // Same length and shape, new objects: a result whose call was replaced away.
    const replaced = [system, user("summary"), user(), result("a")];
    expect(checker.check(replaced)).toBeInstanceOf(ToolResultWithoutCallError);
    expect(checker.check([system, user("summary")])).toBeUndefined();
  });

  it("gives the call ids of the history it passed, as of that check (a reply's ids stay out of them)", () => {
    const checker = new PairingChecker();
    const history: SurfaceMessage[] = [system, user(), calls("a", "b"), result("a"), result("b")];
    expect(checker.check(history)).toBeUndefined();
    const first = checker.callIds();
    expect(["a", "b", "c"].map((id) => first.has(id))).toEqual([true, true, false]);
    // The next request extends the same history: the earlier set does not grow with it.
    history.push(call("c"), result("c"));
    expect(checker.check(history)).toBeUndefined();
    expect(first.has("c")).toBe(false);
    expect(checker.callIds().has("c")).toBe(true);
    // Another history is scanned whole; a failed check passes no ids.
    expect(checker.check([system, call("x"), result("x")])).toBeUndefined();
    expect(["a", "x"].map((id) => checker.callIds().has(id))).toEqual([false, true]);
    expect(checker.check([system, call("y")])).toBeInstanceOf(UnresolvedToolCallsError);
    expect(checker.callIds().has("y")).toBe(false);
  });
});
