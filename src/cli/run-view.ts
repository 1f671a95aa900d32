/**
 * The human view of `bdsh run`: the reply on stdout, everything about the work on stderr.
 *
 * - stdout on a terminal: the reply rendered as markdown, line by line as it streams (MarkdownStream).
 * - stdout not a terminal (`codex exec`, `claude -p`): stdout carries the final answer only, exactly as the
 *   model wrote it, at the end (a newline added when it has none). Every other assistant text (narration
 *   before tool calls, a reply a nudge or a goal round followed) goes to stderr once its message is known
 *   not to be the last. No status line then: stdout and stderr may share one terminal (`| cat`), and a
 *   line redraw on stderr would erase half-written stdout lines.
 * - While the status line runs, reply text is held and written with the next frame (at most
 *   MAX_REPAINTS_PER_SECOND frames a second, each at most three writes: clear, text, status), so a fast
 *   stream does not repaint the terminal per line (bench/ui). Anything on stderr flushes it first.
 * - stderr and stdout on a terminal: a status line (spinner, elapsed, activity, tokens) repainted at most
 *   MAX_REPAINTS_PER_SECOND times and cleared before anything else is printed, so it never mixes into
 *   other lines; reasoning dimmed. Otherwise no status line and no reasoning.
 * - While a prompt owns the terminal (`holdStatus(true)`, terminal-approvals.ts) nothing is painted or
 *   printed: output that arrives meanwhile (a parallel call's card, a child's line) waits and is printed,
 *   in order, when the prompt closes. Holds nest.
 * - Tool results as cards (render/tool-card.ts) on stderr, on a terminal or not; colours only when the
 *   stream's own `colorEnabled` says so (NO_COLOR, FORCE_COLOR).
 * - `quiet`: nothing while it runs; `finish` prints the final answer to stdout and nothing else.
 *
 * Events arrive from `onDurable` (durable order); deltas from `onDelta` (live, before their event).
 */
import type { LogEvent } from "../log/events.js";
import type { AssistantBlock } from "../log/messages.js";
import type { UsageTotals } from "../log/usage.js";
import { formatUsage } from "../model/pricing.js";
import { Transcript } from "../transcript/projection.js";
import { itemLines } from "./render/item-lines.js";
import { MarkdownStream } from "./render/markdown.js";
import { activityAfter, formatElapsed, statusLine } from "./render/status.js";
import { colorEnabled, fitLine, type Palette, palette, sanitize, wrapText } from "./render/style.js";
import { shortId } from "./short-id.js";

/** What the view writes to: process.stdout / process.stderr, or a fake terminal in tests and bench/ui. */
export type TermStream = { write(text: string): unknown; isTTY?: boolean; columns?: number };

export type View = {
  events(events: readonly LogEvent[]): void;
  delta(kind: string, text: string): void;
  /** The run is over: stop the status line, end the reply (quiet: print the final answer). */
  finish(): void;
};

export type RunViewOptions = {
  stdout: TermStream;
  stderr: TermStream;
  env: NodeJS.ProcessEnv;
  quiet?: boolean;
  /** Default true: the spinner line on a terminal stderr (off where something else owns the terminal). */
  statusLine?: boolean;
  now?: () => number;
};

export const MAX_REPAINTS_PER_SECOND = 8;
const CLEAR_LINE = "\r\u001b[2K";

export class RunView implements View {
  readonly startedAt: number;
  /** Status-line paints so far (bench/ui reads it). */
  repaints = 0;
  private readonly out: Palette;
  private readonly err: Palette;
  private readonly markdown: MarkdownStream | undefined;
  private readonly live: boolean;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private statusShown = false;
  private holds = 0;
  /** Output that arrived while a prompt held the terminal, in order. */
  private deferred: { stream: "out" | "err"; text: string }[] = [];
  /** stdout is not a terminal: it gets the final answer only (see the header). */
  private readonly answerOnly: boolean;
  /** answerOnly: the text of the message being streamed, and the latest candidate final answer. */
  private streamed = "";
  private candidate = "";
  private frame = 0;
  private activity = "thinking";
  private reasoning = "";
  private textOpen = false;
  /** This run's events as the shared transcript (src/transcript/): tool cards, nudges, rounds, notices. */
  private readonly conversation = new Transcript();
  private lastAnswer = "";
  /** Rendered reply text waiting for the next frame (only while the status line runs). */
  private pendingOut = "";
  /** The usage of the events this view saw (the run's requests), as `usageOf` counts it. */
  get totals(): UsageTotals {
    return this.conversation.usage;
  }

  constructor(private readonly options: RunViewOptions) {
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    this.out = palette(colorEnabled(options.stdout, options.env));
    this.err = palette(colorEnabled(options.stderr, options.env));
    this.markdown =
      options.stdout.isTTY && !options.quiet ? new MarkdownStream(this.out, this.width("out")) : undefined;
    this.answerOnly = options.stdout.isTTY !== true && !options.quiet;
    this.live =
      options.stderr.isTTY === true &&
      options.stdout.isTTY === true &&
      !options.quiet &&
      options.statusLine !== false;
    if (this.live) {
      this.timer = setInterval(() => this.paint(), 1000 / MAX_REPAINTS_PER_SECOND);
      this.timer.unref();
    }
  }

  /** The text of the last assistant message this view saw (the final answer). */
  get finalAnswer(): string {
    return this.lastAnswer;
  }

  events(events: readonly LogEvent[]): void {
    for (const event of events) this.event(event);
  }

  delta(kind: string, text: string): void {
    if (this.options.quiet) return;
    if (kind === "reasoning") {
      this.activity = "thinking";
      if (!this.live) return; // reasoning is shown on a terminal only
      this.reasoning += text;
      const end = this.reasoning.lastIndexOf("\n");
      if (end >= 0) {
        this.printReasoning(this.reasoning.slice(0, end));
        this.reasoning = this.reasoning.slice(end + 1);
      }
      return;
    }
    if (kind !== "text") return;
    this.activity = "writing";
    this.endReasoning();
    if (this.answerOnly) {
      this.streamed += text; // printed when its message is stored (see event)
      return;
    }
    if (this.markdown) {
      const rendered = this.markdown.push(text);
      if (rendered) this.write("out", rendered);
    } else {
      this.write("out", text);
      this.textOpen = !text.endsWith("\n");
    }
  }

  finish(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.flushOut();
    this.endReply();
    this.clearStatus();
    if (this.holds > 0) {
      this.holds = 0;
      this.releaseDeferred();
    }
    if (this.answerOnly && this.candidate !== "") {
      this.options.stdout.write(this.candidate.endsWith("\n") ? this.candidate : `${this.candidate}\n`);
      this.candidate = ""; // plain chat finishes each turn: a reply is printed once
    }
    if (this.options.quiet && this.lastAnswer !== "") {
      // Piped, the answer goes out as written; on a terminal, through the sanitiser like every reply.
      const answer = this.options.stdout.isTTY ? sanitize(this.lastAnswer) : this.lastAnswer;
      this.options.stdout.write(answer.endsWith("\n") ? answer : `${answer}\n`);
    }
  }

  /**
   * A prompt owns the terminal while `open`: the status line is cleared and not painted, and output waits,
   * until it closes.
   */
  holdStatus(open: boolean): void {
    if (open) {
      if (this.holds++ > 0) return;
      this.flushOut();
      this.clearStatus();
      return;
    }
    if (this.holds === 0) return;
    if (--this.holds === 0) this.releaseDeferred();
  }

  private releaseDeferred(): void {
    const deferred = this.deferred.splice(0);
    for (const { stream, text } of deferred) this.write(stream, text);
  }

  /** A line on stderr that is not part of the work (a cancel notice), printed without breaking the status. */
  notice(line: string): void {
    this.write("err", `${line}\n`);
  }

  /**
   * The closing lines on stderr: duration, tokens, cost, and how to continue the session. `usage` is the
   * run's usage from the log (usageOf: side requests included); without it, the assistant messages seen.
   * `cost` undefined (price unknown) prints no cost at all, never $0.
   */
  summary(s: { sessionId: string; cost?: number | undefined; usage?: UsageTotals }): void {
    if (this.options.quiet) return;
    const p = this.err;
    const id = shortId(s.sessionId);
    // The run's own usage (M20), written as every view writes it; no price, no cost at all (never $0).
    const parts = [
      formatElapsed(this.now() - this.startedAt),
      formatUsage(s.usage ?? this.totals, s.cost ?? null),
    ];
    const lines = [
      parts.join(" · "),
      `session ${id} · continue: bdsh run --session ${id} "…" or bdsh chat --session ${id}`,
    ];
    // Word-wrapped to a terminal: a narrow one never cuts a word or an id in two (a pipe gets whole lines).
    const width = this.options.stderr.isTTY ? this.width("err") : Number.POSITIVE_INFINITY;
    for (const line of lines.flatMap((l) => fitLine(l, width))) this.write("err", `${p.dim(line)}\n`);
  }

  private event(event: LogEvent): void {
    if (this.options.quiet) {
      this.conversation.add([event]); // usage, for the summary's tokens
      if (event.type === "assistant/message") this.noteMessage(event.data.blocks);
      return;
    }
    this.activity = activityAfter(event) ?? this.activity;
    if (event.type === "assistant/message") {
      this.noteMessage(event.data.blocks);
      if (this.answerOnly) this.sortAnswer(event.data.blocks);
      this.endReply();
    }
    // Everything about the work, as `bdsh chat` shows it (render/item-lines.ts), on stderr.
    for (const change of this.conversation.add([event])) {
      const lines = itemLines(change, this.err, this.width("err"));
      if (lines.length > 0) this.write("err", `${lines.join("\n")}\n`);
    }
  }

  /**
   * answerOnly: a message with tool calls is narration (stderr now); one without is the final answer unless
   * another message with text follows, which sends it to stderr then.
   */
  private sortAnswer(blocks: readonly AssistantBlock[]): void {
    const text = textOf(blocks);
    this.streamed = "";
    if (text.trim() === "") return;
    const narration = (line: string) => this.write("err", `${sanitize(line).replace(/\n$/, "")}\n`);
    if (this.candidate !== "") narration(this.candidate);
    this.candidate = "";
    if (blocks.some((b) => b.type === "tool-call")) narration(text);
    else this.candidate = text;
  }

  private noteMessage(blocks: readonly AssistantBlock[]): void {
    const text = blocks
      .filter((b) => b.type === "text")
      .map((b) => b.text)
      .join("");
    if (text.trim() !== "") this.lastAnswer = text;
  }

  private endReasoning(): void {
    if (this.reasoning !== "") this.printReasoning(this.reasoning);
    this.reasoning = "";
  }

  private printReasoning(text: string): void {
    const lines = sanitize(text)
      .split("\n")
      .flatMap((line) => wrapText(line, this.width("err")));
    this.write("err", `${lines.map((line) => this.err.dim(line)).join("\n")}\n`);
  }

  /** A message is complete: print its held-back last line. */
  private endReply(): void {
    this.endReasoning();
    if (this.markdown) {
      const rest = this.markdown.flush();
      if (rest) this.write("out", rest);
    } else if (this.textOpen) {
      this.write("out", "\n");
    }
    this.textOpen = false;
  }

  private width(stream: "out" | "err"): number {
    const columns = (stream === "out" ? this.options.stdout : this.options.stderr).columns;
    return columns && columns > 0 ? columns : 80;
  }

  private write(stream: "out" | "err", text: string): void {
    if (this.holds > 0) {
      this.deferred.push({ stream, text });
      return;
    }
    if (stream === "out" && this.timer) {
      this.pendingOut += text;
      return;
    }
    this.flushOut();
    this.clearStatus();
    (stream === "out" ? this.options.stdout : this.options.stderr).write(text);
  }

  private flushOut(): void {
    if (this.pendingOut === "") return;
    this.clearStatus();
    this.options.stdout.write(this.pendingOut);
    this.pendingOut = "";
  }

  private clearStatus(): void {
    if (!this.statusShown) return;
    this.options.stderr.write(CLEAR_LINE);
    this.statusShown = false;
  }

  private paint(): void {
    if (this.holds > 0) return;
    this.flushOut();
    const tokens = this.totals.input + this.totals.cachedInput + this.totals.output;
    const line = statusLine(
      {
        frame: this.frame++,
        elapsedMs: this.now() - this.startedAt,
        activity: this.activity,
        ...(tokens > 0 ? { tokens } : {}),
        hint: "Ctrl-C to interrupt",
      },
      this.err,
      this.width("err"),
    );
    this.options.stderr.write(`${CLEAR_LINE}${line}`);
    this.statusShown = true;
    this.repaints++;
  }
}

function textOf(blocks: readonly AssistantBlock[]): string {
  return blocks
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("");
}

/** `--json`: every durable event as one JSON line, from the session's first event. */
export function jsonView(write: (line: string) => void, serialize: (event: LogEvent) => string): View {
  return {
    events: (events) => {
      for (const event of events) write(serialize(event));
    },
    delta: () => undefined,
    finish: () => undefined,
  };
}
