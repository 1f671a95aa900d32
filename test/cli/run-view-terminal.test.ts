/**
 * RunView on fake terminals: a prompt owns the terminal while it is open (nothing painted or printed over
 * it), and a piped stdout carries the final answer only, narration going to stderr.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { RunView, type TermStream } from "../../src/cli/run-view.js";
import type { EventDataMap, EventType, LogEvent } from "../../src/log/events.js";

function term(isTTY: boolean): TermStream & { text: string } {
  const t = {
    text: "",
    isTTY,
    columns: 100,
    write(s: string) {
      t.text += s;
      return true;
    },
  };
  return t;
}

let seq = 0;
function event<T extends EventType>(type: T, data: EventDataMap[T]): LogEvent {
  return { sessionId: "s", seq: ++seq, type, at: "2026-01-01T00:00:00.000Z", data } as LogEvent;
}

const callAndResult = (id: string, command: string, output: string) => [
  event("tool/call", { callId: id, name: "bash", arguments: JSON.stringify({ command }) }),
  event("tool/result", { callId: id, name: "bash", text: output }),
];

afterEach(() => {
  vi.useRealTimers();
});

describe("a prompt owns the terminal", () => {
  it("while held, the status line is not painted and output waits; it is printed in order when the prompt closes", () => {
    vi.useFakeTimers();
    const stdout = term(true);
    const stderr = term(true);
    const view = new RunView({ stdout, stderr, env: { NO_COLOR: "1" } });
    vi.advanceTimersByTime(500);
    expect(view.repaints).toBeGreaterThan(0);
    view.holdStatus(true);
    const before = stderr.text;
    const paints = view.repaints;
    // The prompt is written by its owner; a parallel call's card and a second (nested) hold arrive meanwhile.
    stderr.write("  your choice (y/c/s/p/N): ");
    view.events(callAndResult("c1", "echo parallel", "parallel"));
    view.holdStatus(true);
    view.holdStatus(false);
    vi.advanceTimersByTime(2_000);
    expect(view.repaints).toBe(paints);
    expect(stderr.text).toBe(`${before}  your choice (y/c/s/p/N): `);
    view.holdStatus(false);
    expect(stderr.text.slice(before.length)).toContain("echo parallel");
    view.finish();
  });
});

describe("clean pipes", () => {
  it("stdout not a terminal: stdout is the final answer byte for byte, narration and cards on stderr", () => {
    const stdout = term(false);
    const stderr = term(true);
    const view = new RunView({ stdout, stderr, env: { NO_COLOR: "1" } });
    view.delta("text", "I will look first.");
    view.events([
      event("assistant/message", {
        blocks: [
          { type: "text", text: "I will look first." },
          { type: "tool-call", id: "c1", name: "bash", arguments: '{"command":"ls"}' },
        ],
      } as EventDataMap["assistant/message"]),
      ...callAndResult("c1", "ls", "a.txt"),
    ]);
    view.delta("text", "Not done yet.");
    view.events([
      event("assistant/message", {
        blocks: [{ type: "text", text: "Not done yet." }],
      } as EventDataMap["assistant/message"]),
    ]);
    view.delta("text", "The answer:\n\n**42**\n");
    view.events([
      event("assistant/message", {
        blocks: [{ type: "text", text: "The answer:\n\n**42**\n" }],
      } as EventDataMap["assistant/message"]),
    ]);
    expect(stdout.text).toBe("");
    view.finish();
    expect(stdout.text).toBe("The answer:\n\n**42**\n");
    expect(stderr.text).toContain("I will look first.\n");
    expect(stderr.text).toContain("Not done yet.\n");
    expect(stderr.text).toContain("$ ls");
    expect(stderr.text).not.toContain("42");
    // No status line: stdout and stderr may share the terminal, and a redraw would erase stdout's lines.
    expect(view.repaints).toBe(0);
    expect(stderr.text).not.toContain("\r");
  });

  it("stdout not a terminal and stderr a terminal: no spinner even after time passes", () => {
    vi.useFakeTimers();
    const view = new RunView({ stdout: term(false), stderr: term(true), env: {} });
    vi.advanceTimersByTime(3_000);
    expect(view.repaints).toBe(0);
    view.finish();
  });
});
