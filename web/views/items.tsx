/**
 * One conversation item as the dashboard draws it. Everything shown is model or user
 * output: it is rendered as text nodes and elements made from Markdown tokens (../markdown.tsx), never
 * as HTML.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { ToolDetailsOf } from "../../src/log/tool-details.js";
import { formatTokens } from "../../src/log/usage.js";
import { formatElapsed } from "../../src/transcript/elapsed.js";
import { presentedFilesOf } from "../../src/transcript/file-kind.js";
import {
  childStateLabel,
  gitRepairLines,
  goalRoundLabel,
  nudgeLabel,
  sourceLabel,
  turnEndLabel,
} from "../../src/transcript/labels.js";
import { detailSummary, parseArgs } from "../../src/transcript/tool-summary.js";
import type { Decision } from "../api.js";
import type { ApprovalState, Item, ToolState } from "../conversation.js";
import { Icon } from "../icons.js";
import { Markdown } from "../markdown.js";
import { FilesCard } from "./files-card.js";

export type ItemActions = {
  /** The session shown (presented files are downloaded through its file route). */
  sessionId: string;
  decide(approvalId: string, decision: Decision): void;
  answer(questionId: string, answers: string[]): void;
  open(sessionId: string): void;
  /** Puts a message's text on the clipboard. */
  copy?(text: string): void;
};

function CopyButton({ text, actions }: { text: string; actions: ItemActions }) {
  if (!actions.copy || !text) return null;
  return (
    <button
      type="button"
      class="icon-button copy"
      data-testid="copy-message"
      aria-label="Copy message"
      title="Copy message"
      onClick={() => actions.copy?.(text)}
    >
      <Icon name="copy" />
    </button>
  );
}

export function ItemView({ item, actions }: { item: Item; actions: ItemActions }) {
  const common = { "data-testid": "event", "data-seq": item.seq, "data-kind": item.kind };
  switch (item.kind) {
    case "user":
      return (
        <div {...common} class="msg user">
          <div class="who">
            you <CopyButton text={item.text} actions={actions} />
          </div>
          <Text text={item.text} />
        </div>
      );
    case "context":
      return (
        <details {...common} class="msg context" data-source={item.source}>
          <summary>{sourceLabel(item.source)}</summary>
          <pre>{item.text}</pre>
        </details>
      );
    case "nudge":
      return (
        <details {...common} class="msg context nudge" data-source="continuation">
          <summary>{nudgeLabel(item.about)}</summary>
          <pre>{item.text}</pre>
        </details>
      );
    case "reasoning":
      return (
        <details {...common} class="msg reasoning">
          <summary>thinking</summary>
          <pre>{item.text}</pre>
        </details>
      );
    case "assistant":
      return (
        <div {...common} class="msg assistant">
          <div class="who">
            {item.model || "assistant"} <CopyButton text={item.text} actions={actions} />
          </div>
          <Text text={item.text} />
          {item.interrupted ? <div class="tag warn">interrupted</div> : null}
        </div>
      );
    case "tool": {
      // T22 `present`: the deliverables as cards (download links, image previews) under the call.
      const files = presentedFilesOf(item.tool.result?.details);
      if (!files) return <ToolCard tool={item.tool} common={common} actions={actions} />;
      return (
        <div class="tool-with-files">
          <ToolCard tool={item.tool} common={common} actions={actions} />
          <FilesCard sessionId={actions.sessionId} files={files} />
        </div>
      );
    }
    case "approval":
      // Drawn inside its call's card when the call is in this transcript: question, answer and result together.
      if (item.approval.hasCall) return null;
      return (
        <div
          {...common}
          class={`card approval ${item.approval.answer ? "done" : "open"}`}
          data-approval-id={item.approval.id}
        >
          <ApprovalBody approval={item.approval} actions={actions} />
        </div>
      );
    case "question":
      return <QuestionCard item={item} actions={actions} common={common} />;
    case "turn-start":
      return <div {...common} class="marker" />;
    case "turn-end":
      return (
        <div {...common} class={`marker end ${item.reason}`} data-reason={item.reason}>
          turn {item.turn ?? ""} {turnEndLabel(item.reason)}
          {item.error ? `: ${item.error.code} ${item.error.message}` : ""}
          <span class="muted">
            {item.durationMs !== undefined ? ` · ${(item.durationMs / 1000).toFixed(1)} s` : ""} ·{" "}
            {formatTokens(item.turnUsage.input + item.turnUsage.cachedInput)} in ·{" "}
            {formatTokens(item.turnUsage.output)} out · {item.turnUsage.requests} requests
          </span>
        </div>
      );
    case "retry":
      return (
        <div {...common} class="marker warn">
          retry {item.attempt} in {Math.round(item.delayMs / 100) / 10} s: {item.error.code}{" "}
          {item.error.message}
        </div>
      );
    case "attempt":
      return (
        <div {...common} class="marker warn">
          attempt {item.attempt} failed ({item.error.code}){item.text ? `, partial reply discarded` : ""}
        </div>
      );
    case "compaction": {
      const c = item.compaction;
      const tokens =
        c.tokensBefore !== undefined && c.tokensAfter !== undefined
          ? `, ${c.tokensBefore} → ${c.tokensAfter} tokens`
          : "";
      return (
        <div {...common} class="marker info">
          compaction ({c.reason})
          {c.done ? (c.ok ? ` done${tokens}` : ` failed: ${c.error ?? "?"}`) : " running…"}
        </div>
      );
    }
    case "goal":
      return (
        <div {...common} class="marker info">
          goal {item.action}: {item.goal.objective} ({item.goal.phase}, round {item.goal.roundsStarted}/
          {item.goal.maxRounds})
        </div>
      );
    case "goal-round":
      return (
        <details {...common} class="marker info">
          <summary>{goalRoundLabel(item.round, item.maxRounds)}</summary>
          {item.text ? <pre>{item.text}</pre> : null}
        </details>
      );
    case "subagent":
      return (
        <div {...common} class="card subagent">
          <div class="card-head">
            {item.child.mode === "fork" ? "fork" : "subagent"}{" "}
            <a href={`#/sessions/${encodeURIComponent(item.child.childId)}`}>
              {item.child.childId.slice(0, 13)}
            </a>{" "}
            <span class="tag" data-testid="child-state" data-state={item.child.state}>
              {childStateLabel(item.child.state)}
            </span>
          </div>
          <div class="muted">{item.child.task}</div>
        </div>
      );
    case "job":
      return (
        <div {...common} class="marker">
          job {item.label}: {item.status ?? "running"}
          {item.exitCode !== undefined ? ` (exit ${item.exitCode})` : ""}
        </div>
      );
    case "error":
      return (
        <div {...common} class="marker error">
          {item.code}: {item.message}
        </div>
      );
    case "git-repaired":
      return (
        <div {...common} class="marker warn">
          {gitRepairLines(item).map((line) => (
            <div key={line}>{line}</div>
          ))}
        </div>
      );
    case "instructions-withheld":
      return (
        <div {...common} class="marker warn">
          {item.withheld.files.length} instruction file(s) left out until reviewed ({item.withheld.accept}):{" "}
          {item.withheld.files.map((f) => f.path).join(", ")}
        </div>
      );
    case "note":
      return (
        <div {...common} class="marker">
          {item.text}
        </div>
      );
  }
}

const OUTPUT_LINES = 12;

/** Durations below this are not shown. */
const SHOWN_DURATION_MS = 1_000;

/** The card draws what the tool recorded (`details`), never what its text or arguments say it did. */
/** T16: what a call asks a person to allow, and the answer once given. */
function ApprovalBody({ approval: a, actions }: { approval: ApprovalState; actions: ItemActions }) {
  return (
    <>
      <div class="card-head">
        approval: <b>{a.tool}</b>
      </div>
      <pre>{a.summary}</pre>
      {a.reason ? <div class="muted">{a.reason}</div> : null}
      {a.answer ? (
        <div class="tag" data-testid="approval-answer">
          {a.answer}
        </div>
      ) : (
        <fieldset class="buttons">
          <legend class="sr-only">Allow {a.tool}?</legend>
          {(["allow-once", "allow-session", "deny"] as const).map((d) => (
            <button key={d} type="button" data-decision={d} onClick={() => actions.decide(a.id, d)}>
              {d === "allow-once" ? "Allow once" : d === "allow-session" ? "Allow for session" : "Deny"}
            </button>
          ))}
        </fieldset>
      )}
    </>
  );
}

function ToolCard({
  tool,
  common,
  actions,
}: {
  tool: ToolState;
  common: Record<string, unknown>;
  actions: ItemActions;
}) {
  const args = parseArgs(tool.arguments);
  const result = tool.result;
  const details = result?.details; // checked by the projection (toolDetailsOf): a known kind or none
  const command = details?.kind === "command" ? details : undefined;
  const exit = command?.exitCode;
  const failed = result?.isError === true || (exit !== undefined && exit !== 0);
  const state = !result ? (tool.state === "approval" ? "waiting" : "running") : failed ? "failed" : "ok";
  const change = details?.kind === "file-change" && !result?.isError ? details : undefined;
  const todos = details?.kind === "todos" && !result?.isError ? details.items : undefined;
  const summary = details && !result?.isError ? detailSummary(details) : "";
  let head: ComponentChildren = tool.name;
  if (tool.name === "bash" && typeof args.command === "string") head = <code>$ {args.command}</code>;
  else if (change) head = `${tool.name} ${change.path}`;
  return (
    <div {...common} class={`card tool ${state}`} data-tool={tool.name} data-state={state}>
      <div class="card-head">
        <span class="mark">
          <Icon
            name={state === "ok" ? "check" : state === "failed" ? "cross" : "dot"}
            label={state === "ok" ? "done" : state === "failed" ? "failed" : state}
          />
        </span>{" "}
        {head}
        {exit !== undefined && exit !== 0 ? <span class="tag error">exit {exit}</span> : null}
        {change ? (
          <span class="muted">
            {" "}
            {change.change === "created"
              ? `created, ${change.added} lines`
              : `+${change.added} -${change.removed}`}
          </span>
        ) : null}
        {result?.durationMs !== undefined && result.durationMs >= SHOWN_DURATION_MS ? (
          <span class="muted"> {formatElapsed(result.durationMs)}</span>
        ) : null}
      </div>
      {tool.approval ? (
        <div
          class={`approval-block ${tool.approval.answer ? "done" : "open"}`}
          data-kind="approval"
          data-approval-id={tool.approval.id}
        >
          <ApprovalBody approval={tool.approval} actions={actions} />
        </div>
      ) : null}
      {command ? <CommandNotes details={command} /> : null}
      {change ? (
        <pre class="diff">
          {change.diff.map((line, i) => (
            <div
              key={i}
              class={`d${line.kind === "+" ? "add" : line.kind === "-" ? "del" : line.kind === "@" ? "hunk" : "ctx"}`}
            >
              {line.kind === "@" ? line.text : `${line.kind} ${line.text}`}
            </div>
          ))}
          {change.omittedLines ? <div class="dctx">… {change.omittedLines} more lines</div> : null}
        </pre>
      ) : null}
      {todos ? (
        <ul class="todos">
          {todos.map((t, i) => (
            <li
              key={i}
              class={t.status === "completed" ? "done" : t.status === "in_progress" ? "doing" : "pending"}
            >
              <Icon
                name={t.status === "completed" ? "check" : t.status === "in_progress" ? "half" : "box"}
                label={
                  t.status === "completed" ? "done" : t.status === "in_progress" ? "in progress" : "to do"
                }
              />{" "}
              {t.content}
            </li>
          ))}
        </ul>
      ) : null}
      {summary ? <div class="muted">{summary}</div> : null}
      {result && !change && !todos ? <Output text={result.text} /> : null}
    </div>
  );
}

function CommandNotes({ details }: { details: ToolDetailsOf<"command"> }) {
  const notes: string[] = [];
  if (details.timedOut) notes.push("timed out");
  if (details.stopped !== undefined) notes.push(`stopped: ${details.stopped}`);
  if (details.signal !== undefined) notes.push(`killed by signal ${details.signal}`);
  if (details.jobId !== undefined) notes.push(`background job ${details.jobId}`);
  if (details.truncated) notes.push(`output truncated; full output: ${details.fullOutput ?? "unavailable"}`);
  if (details.sandboxDenied) notes.push("the sandbox denied an access");
  return notes.length > 0 ? <div class="muted">{notes.join(" · ")}</div> : null;
}

function Output({ text }: { text: string }) {
  const [all, setAll] = useState(false);
  const lines = text.replace(/\n+$/, "").split("\n");
  const cut = !all && lines.length > OUTPUT_LINES;
  return (
    <div>
      <pre class="output">{cut ? lines.slice(-OUTPUT_LINES).join("\n") : text}</pre>
      {cut ? (
        <button type="button" class="link" onClick={() => setAll(true)}>
          show all {lines.length} lines
        </button>
      ) : null}
    </div>
  );
}

/** One question as T18 records it: its text, the options offered, and whether free text is allowed. */
type Asked = { question: string; options: string[]; header?: string };

function askedOf(entry: unknown): Asked {
  if (typeof entry === "string") return { question: entry, options: [] };
  const e = (entry ?? {}) as { question?: unknown; options?: unknown; header?: unknown };
  const options = Array.isArray(e.options)
    ? e.options.map((o) =>
        typeof o === "string" ? o : String((o as { label?: unknown })?.label ?? JSON.stringify(o)),
      )
    : [];
  return {
    question: typeof e.question === "string" ? e.question : JSON.stringify(entry),
    options,
    ...(typeof e.header === "string" ? { header: e.header } : {}),
  };
}

/**
 * T18's questions: each one's options as buttons (the one picked is the answer), and a text field for an
 * answer in the person's own words (T18 always takes free text, also beside options). Several questions
 * are answered together, one answer each.
 */
function QuestionCard({
  item,
  actions,
  common,
}: {
  item: Item & { kind: "question" };
  actions: ItemActions;
  common: Record<string, unknown>;
}) {
  const q = item.question;
  const asked = q.questions.map(askedOf);
  const [picked, setPicked] = useState<string[]>(() => asked.map(() => ""));
  const set = (i: number, value: string) => setPicked(picked.map((p, j) => (j === i ? value : p)));
  const submit = (answers: string[]) => {
    if (answers.every((a) => a.trim()))
      actions.answer(
        q.id,
        answers.map((a) => a.trim()),
      );
  };
  return (
    <div {...common} class={`card question ${q.answers ? "done" : "open"}`} data-question-id={q.id}>
      <div class="card-head">
        <Icon name="hand" /> question
      </div>
      {q.answers ? (
        <>
          {asked.map((a, i) => (
            <div key={i}>{a.question}</div>
          ))}
          <div class="tag" data-testid="question-answer">
            {q.answers.map(String).join("; ")}
          </div>
        </>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            submit(picked);
          }}
        >
          {asked.map((a, i) => {
            const fieldId = `q-${q.id}-${i}`;
            return (
              <fieldset key={i} class="question-part">
                <legend>{a.header ? `${a.header}: ${a.question}` : a.question}</legend>
                {a.options.length ? (
                  <div class="options" data-testid="question-options">
                    {a.options.map((option) => (
                      <button
                        key={option}
                        type="button"
                        data-testid="question-option"
                        aria-pressed={picked[i] === option}
                        class={picked[i] === option ? "picked" : undefined}
                        onClick={() => {
                          // One question: the button is the answer. Several: it picks this one's.
                          if (asked.length === 1) submit([option]);
                          else set(i, option);
                        }}
                      >
                        {option}
                      </button>
                    ))}
                  </div>
                ) : null}
                <label for={fieldId} class="small">
                  {a.options.length ? "Or answer in your own words" : "Your answer"}
                </label>
                <input
                  id={fieldId}
                  name="answer"
                  value={a.options.includes(picked[i] ?? "") ? "" : (picked[i] ?? "")}
                  onInput={(e) => set(i, (e.target as HTMLInputElement).value)}
                />
              </fieldset>
            );
          })}
          <button type="submit" data-testid="question-submit">
            Answer
          </button>
        </form>
      )}
    </div>
  );
}

/** Model or user text, as Markdown drawn without HTML (../markdown.tsx). */
export function Text({ text }: { text: string }) {
  return <Markdown text={text} />;
}
