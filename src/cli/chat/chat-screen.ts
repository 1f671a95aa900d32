/**
 * What `bdsh chat` shows, as state: the transcript lines already final, the live part (the
 * reply's unfinished line, the reasoning's last lines, the status), the editor and a modal prompt. The Ink
 * app (chat-app.tsx) draws it; this module knows nothing of React, so tests and bench/ui drive it alone.
 *
 * Invariants:
 * - `transcript` only grows: a line once committed is never changed (Ink's <Static> prints it once).
 * - Durable events arrive in log order (`events`), deltas live before their event (`delta`). A reply's
 *   finished lines are rendered as markdown and committed as they complete; only its last, unfinished line
 *   is live.
 * - After `interrupt()` the screen stops showing the turn's stream at once (L7: the delivered prefix stays
 *   in the log and on the screen, nothing after it is drawn), until the next turn starts.
 * - While a modal is open, keys go to the modal only: an approval answer is never editor text, so it can
 *   never become a message to the model.
 * - Everything model-written is sanitised before it is drawn (no control sequences from the model).
 * - Changes are announced through `onChange`; the app repaints at most `maxFps` times a second.
 */
import type { LogEvent } from "../../log/events.js";
import type { UsageTotals } from "../../log/usage.js";
import { costOf, formatUsage, type Price } from "../../model/pricing.js";
import type { ApprovalAnswer } from "../../tools/types.js";
import { turnEndLabel } from "../../transcript/labels.js";
import { Transcript, type TranscriptChange } from "../../transcript/projection.js";
import { itemLines } from "../render/item-lines.js";
import { MarkdownStream, renderMarkdown } from "../render/markdown.js";
import { activityAfter, formatElapsed } from "../render/status.js";
import { fitLine, type Palette, sanitize, wrapText } from "../render/style.js";
import { commandRows } from "../render/terminal-text.js";
import { type EditorState, EMPTY_EDITOR } from "./editor.js";
import type { PickerItem, SlashCommand } from "./slash-commands.js";

export type TranscriptLine = { id: number; text: string };

export type ApprovalModal = {
  kind: "approval";
  tool: string;
  summary: string;
  reason: string;
  answer(answer: ApprovalAnswer): void;
};

export type QuestionModal = {
  kind: "question";
  question: string;
  options: readonly string[];
  /** The answer typed so far (a question's free-text answer has its own line, never the editor's). */
  typed: string;
  answer(answer: string | undefined): void;
};

/** A list to choose from (`/model`, `/resume`): ↑/↓ move, Enter takes, Esc closes. */
export type PickerModal = {
  kind: "picker";
  title: string;
  items: readonly PickerItem[];
  selected: number;
  /** The row taken, or `undefined` when the picker was closed without a choice. */
  answer(index: number | undefined): void;
};

export type Modal = ApprovalModal | QuestionModal | PickerModal;

/** The slash-command menu under the editor while a command is typed (its rows, the one Enter takes). */
export type CommandMenu = { commands: readonly SlashCommand[]; selected: number };

export type ChatStatus = {
  running: boolean;
  startedAt: number;
  activity: string;
};

/** How many of the reasoning's last lines stay on screen while the model thinks. */
export const REASONING_TAIL_LINES = 3;

/** What to do next, per error code, for an error shown inline. */
const ERROR_HINTS: Record<string, string> = {
  AUTH: "the provider refused the API key: set the key (DEEPSEEK_API_KEY, ANTHROPIC_API_KEY, OPENAI_API_KEY or BDSH_API_KEY, or --api-key-env) and check it with `bdsh doctor --online`",
  QUOTA: "the account is out of credit or quota: top it up with the provider, or switch model with /model",
  RATE_LIMIT: "rate limited after the retries: wait a moment, then send again",
  TRANSPORT: "the provider could not be reached: check the base URL and the network (`bdsh doctor --online`)",
  TIMEOUT: "the provider stopped answering: send again, or check the network",
  SERVER: "the provider failed after the retries: send again in a moment",
  CONTEXT_WINDOW_EXCEEDED: "the conversation no longer fits: /compact, then send again",
  INVALID_REQUEST: "the provider rejected the request; if it names the model, pick another with /model",
};

export function errorHint(code: string): string | undefined {
  return ERROR_HINTS[code] ?? (code.startsWith("HTTP_404") ? ERROR_HINTS.INVALID_REQUEST : undefined);
}

export class ChatScreen {
  readonly transcript: TranscriptLine[] = [];
  editor: EditorState = EMPTY_EDITOR;
  modal: Modal | undefined;
  status: ChatStatus = { running: false, startedAt: 0, activity: "" };
  /** The reply's unfinished last line (raw, sanitised when drawn). */
  liveLine = "";
  /** The reasoning's last lines while the model thinks. */
  reasoningTail: string[] = [];
  /** A one-line note under the editor (a hint, "press Ctrl-C again to leave"). */
  footer = "";
  /** The slash-command menu, open while a command is typed (chat-tui.ts keeps it in step with the editor). */
  menu: CommandMenu | undefined;
  /** The session is in plan mode: the footer and the status line say so for as long as it lasts. */
  planMode = false;
  /** The session's conversation (src/transcript/): what the transcript lines are drawn from. */
  conversation = new Transcript();
  /** The last reasoning block in full (Ctrl-O shows it). */
  lastReasoning = "";
  version = 0;

  private nextId = 0;
  private markdown: MarkdownStream | undefined;
  private reasoning = "";
  private muted = false;
  /** Deltas were drawn since the last stored reply: that reply is on screen already. */
  private streamedText = false;
  private streamedReasoning = false;
  /** What this screen printed as the person sent it, waiting for its stored message (not printed twice). */
  private readonly sent: string[] = [];
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly p: Palette,
    public width: number,
    private readonly price: () => Price | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Set by a change the person caused (a key, an interrupt, a prompt): the view draws it at once,
   * not at the streaming frame rate. The view reads and clears it. */
  urgent = false;

  changed(urgent = false): void {
    if (urgent) this.urgent = true;
    this.version++;
    for (const listener of this.listeners) listener();
  }

  /** The session's usage: `usageOf` over its log (the same numbers as `sessions show`). */
  get usage(): UsageTotals {
    return this.conversation.usage;
  }

  get cost(): number | undefined {
    return costOf(this.usage, this.price());
  }

  /** Another session is shown from now on (`/new`, `/resume`): its conversation starts empty. */
  switchSession(): void {
    this.endReply();
    this.conversation = new Transcript();
    this.planMode = false;
    this.sent.length = 0;
    this.streamedText = false;
    this.streamedReasoning = false;
  }

  /** Lines into the transcript (each may hold newlines; they are split). */
  commit(text: string): void {
    for (const line of text.replace(/\n$/, "").split("\n"))
      this.transcript.push({ id: this.nextId++, text: line });
    this.changed();
  }

  /** An approval whose command is longer than its modal shows: the whole command, as it will run. */
  approvalCommand(tool: string, summary: string, modalRows: number): void {
    const rows = commandRows(summary, this.width - 4);
    if (rows.length <= modalRows) return;
    this.commit(
      [
        this.p.yellow(`approval needed for ${sanitize(tool)}, the whole command:`),
        ...rows.map((r) => `  │ ${r}`),
      ].join("\n"),
    );
  }

  /** A dim note, each line word-wrapped to the screen (the terminal never cuts one mid-word). */
  note(text: string): void {
    const lines = sanitize(text)
      .split("\n")
      .flatMap((line) => fitLine(line, this.width));
    this.commit(lines.map((line) => this.p.dim(line)).join("\n"));
  }

  /** An error and what to do; `withHint: false` when the message says it already (a setup error). */
  error(code: string, message: string, withHint = true): void {
    const lines = [this.p.red(`✗ ${code}: ${sanitize(message)}`)];
    const hint = withHint ? errorHint(code) : undefined;
    if (hint) lines.push(this.p.dim(`  ${hint}`));
    this.commit(wrapAll(lines.join("\n"), this.width));
  }

  /** The person sent `text`: shown at once, as they typed it. */
  userMessage(text: string, steering: boolean): void {
    this.sent.push(text);
    this.printUser(text, steering);
    if (steering) this.note("  (delivered to the running turn at its next step)");
  }

  private printUser(text: string, steering: boolean): void {
    const label = steering ? this.p.yellow("↳ steer ") : this.p.cyan("› ");
    const lines = sanitize(text).split("\n");
    this.commit(
      lines
        .map((line, i) => `${i === 0 ? label : "  "}${line}`)
        .flatMap((line) => wrapText(line, this.width))
        .join("\n"),
    );
  }

  turnStarted(): void {
    this.muted = false;
    this.status = { running: true, startedAt: this.now(), activity: "thinking" };
    this.changed();
  }

  /** Esc / Ctrl-C: stop drawing the stream now; the agent is cancelled by the caller. */
  interrupt(): void {
    if (!this.status.running || this.muted) return;
    this.endReply();
    this.muted = true;
    this.status = { ...this.status, activity: "interrupting" };
    this.urgent = true;
    this.commit(this.p.yellow("⏹ interrupted"));
  }

  delta(kind: string, text: string): void {
    if (this.muted) return;
    if (kind === "reasoning") {
      this.streamedReasoning = true;
      this.reasoning += text;
      this.reasoningTail = this.reasoning.split("\n").filter(Boolean).slice(-REASONING_TAIL_LINES);
      this.status = { ...this.status, activity: "thinking" };
      this.changed();
      return;
    }
    if (kind !== "text") return;
    this.streamedText = true;
    this.endReasoning();
    if (!this.markdown) this.markdown = new MarkdownStream(this.p, this.width);
    const rendered = this.markdown.push(text);
    const end = text.lastIndexOf("\n");
    this.liveLine = end < 0 ? this.liveLine + text : text.slice(end + 1);
    this.status = { ...this.status, activity: "writing" };
    if (rendered) this.commit(rendered);
    else this.changed();
  }

  events(events: readonly LogEvent[]): void {
    // One event at a time, as they arrived live: a reopened session prints its cards in the order they
    // finished, exactly as it did while it ran.
    for (const event of events) {
      if (event.seq <= this.conversation.lastSeq) continue; // seen already (a reattach replays the log)
      if (event.type === "plan/mode") this.planMode = event.data.mode === "plan";
      this.status = this.statusAfter(event);
      for (const change of this.conversation.add([event])) this.show(change);
    }
    this.changed();
  }

  openModal(modal: Modal): void {
    this.modal = modal;
    this.changed(true);
  }

  closeModal(): void {
    this.modal = undefined;
    this.changed(true);
  }

  setEditor(editor: EditorState): void {
    this.editor = editor;
    this.changed(true);
  }

  setMenu(menu: CommandMenu | undefined): void {
    if (menu === this.menu) return;
    this.menu = menu;
    this.changed(true);
  }

  setPlanMode(on: boolean): void {
    if (on === this.planMode) return;
    this.planMode = on;
    this.changed();
  }

  setFooter(text: string): void {
    this.footer = text;
    this.changed();
  }

  usageLine(u: UsageTotals = this.usage): string {
    const cost = costOf(u, this.price());
    const line = formatUsage(u, cost);
    return cost === undefined ? `${line} (no price for this model; set model.price)` : line;
  }

  /** What the status line says after `event` (the activity, and whether a turn runs). */
  private statusAfter(event: LogEvent): ChatStatus {
    const status = this.status;
    // A goal round or a settlement started the turn: the screen did not.
    if (event.type === "turn/start" && !status.running)
      return { running: true, startedAt: this.now(), activity: "thinking" };
    const activity = activityAfter(event);
    // Interrupted, the stream stops showing at once; only a compaction still says what happens.
    if (activity === undefined || (this.muted && event.type !== "compaction/start")) return status;
    return { ...status, activity };
  }

  /** One change of the conversation on screen (render/item-lines.ts draws what run and chat share). */
  private show(change: TranscriptChange): void {
    const { item } = change;
    const added = change.change === "added";
    switch (item.kind) {
      case "user":
        if (!added) return;
        if (this.sent[0] === item.text)
          this.sent.shift(); // printed when it was sent
        else this.printUser(item.text, item.steer);
        return;
      case "reasoning":
        if (!added) return;
        if (this.streamedReasoning) return; // endReasoning summarised it as it ended
        this.lastReasoning = item.text;
        this.commit(this.p.dim(thoughtLine(item.text)));
        return;
      case "assistant": {
        if (!added) return;
        const streamed = this.streamedText;
        this.streamedText = false;
        this.streamedReasoning = false;
        if (this.muted) return;
        this.endReply();
        if (!streamed && item.text.trim() !== "")
          this.commit(renderMarkdown(sanitize(item.text), this.p, this.width).replace(/\n+$/, ""));
        if (item.interrupted && !streamed) this.commit(this.p.yellow("⏹ interrupted"));
        return;
      }
      case "turn-end": {
        this.endReply();
        this.streamedText = false;
        this.streamedReasoning = false;
        this.status = { ...this.status, running: false, activity: "" };
        if (item.error) this.error(item.error.code, item.error.message);
        else if (item.reason !== "completed" && !this.muted)
          this.note(`the turn ended: ${turnEndLabel(item.reason)}`);
        const took = item.durationMs === undefined ? "" : `${formatElapsed(item.durationMs)} · `;
        this.note(`${took}${this.usageLine(item.sessionUsage)}`);
        this.muted = false;
        return;
      }
      case "error":
        this.error(item.code, item.message);
        return;
      default: {
        if (this.muted && item.kind === "tool") return;
        const lines = itemLines(change, this.p, this.width);
        if (lines.length > 0) this.commit(lines.join("\n"));
      }
    }
  }

  private endReasoning(): void {
    if (this.reasoning === "") return;
    this.lastReasoning = this.reasoning;
    // The same line a reopened session shows for it (the log keeps the reasoning, not how long it took).
    this.commit(this.p.dim(thoughtLine(this.reasoning)));
    this.reasoning = "";
    this.reasoningTail = [];
  }

  private endReply(): void {
    this.endReasoning();
    if (this.markdown) {
      const rest = this.markdown.flush();
      this.markdown = undefined;
      if (rest) this.commit(rest);
    }
    this.liveLine = "";
  }

  /** Ctrl-O: the last reasoning block in full, dimmed. */
  expandReasoning(): void {
    const text = this.reasoning || this.lastReasoning;
    if (!text) {
      this.note("no reasoning to show yet");
      return;
    }
    this.commit(wrapAll(sanitize(text), this.width, (line) => this.p.dim(line)));
  }
}

function wrapAll(text: string, width: number, style: (s: string) => string = (s) => s): string {
  return text
    .split("\n")
    .flatMap((line) => wrapText(line, width))
    .map(style)
    .join("\n");
}

/** "∴ thought (3 lines, Ctrl-O shows it)". */
function thoughtLine(reasoning: string): string {
  const lines = reasoning.split("\n").filter(Boolean).length;
  return `∴ thought (${lines} line${lines === 1 ? "" : "s"}, Ctrl-O shows it)`;
}
