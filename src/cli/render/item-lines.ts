/**
 * Transcript items (src/transcript/) as terminal lines, for `bdsh run` and `bdsh chat` alike: the same item
 * looks the same in both, live or reopened.
 *
 * `itemLines(change)` answers what to print for one change of the projection, or nothing:
 * - a tool call is printed once, when its result is stored (its card); a pending call prints nothing;
 * - a child is printed when it starts and again when it settles; a compaction when it starts and ends;
 *   an approval or a question when it is answered;
 * - harness messages a person wants (NOTICE_SOURCES), nudges and goal rounds say what they are, in words;
 * - user text, assistant text, reasoning and the turn's end belong to each view (streaming is theirs).
 * Every model- or workspace-written part passes the sanitiser; lines are cut or wrapped to `width`.
 */
import {
  childStateLabel,
  gitRepairLines,
  NOTICE_SOURCES,
  nudgeLabel,
  sourceLabel,
} from "../../transcript/labels.js";
import type { TranscriptChange } from "../../transcript/projection.js";
import { filesCard, presentedFilesOf } from "./files-card.js";
import { type Palette, sanitize, truncate } from "./style.js";
import { toolCard } from "./tool-card.js";

const short = (id: string) => id.slice(0, 13);
const firstLine = (text: string, max = 100) => truncate(sanitize(text.split("\n")[0] ?? ""), max);

export function itemLines(change: TranscriptChange, p: Palette, width: number): string[] {
  const { item } = change;
  const added = change.change === "added";
  switch (item.kind) {
    case "tool": {
      const result = item.tool.result;
      if (!result || result.synthetic) return [];
      const card = toolCard({ name: item.tool.name, arguments: item.tool.arguments }, result, p, width);
      // T22 `present`: the deliverables as cards right under the call that declared them.
      const files = presentedFilesOf(result.details);
      return files ? [...card, ...filesCard(files, { palette: p, width })] : card;
    }
    case "nudge":
      return [p.dim(`↻ ${nudgeLabel(item.about)}`)];
    case "goal-round":
      // P4: one short line a round (the round's own text is the model's, not the person's).
      return added ? [p.cyan(`◎ goal round ${item.round}/${item.maxRounds}`)] : [];
    case "goal": {
      const { goal } = item;
      const why = goal.phase === "blocked" && goal.blockedReason ? `: ${firstLine(goal.blockedReason)}` : "";
      return [p.cyan(`◎ goal ${sanitize(item.action)}: ${firstLine(goal.objective)} (${goal.phase}${why})`)];
    }
    case "context":
      return added && NOTICE_SOURCES.has(item.source)
        ? [p.dim(`[${sourceLabel(item.source)}] ${firstLine(item.text)}`)]
        : [];
    case "subagent": {
      const { child } = item;
      if (added && child.state === "running")
        return [
          p.dim(
            `⇢ ${child.mode === "fork" ? "fork" : "subagent"} ${short(child.childId)}: ${firstLine(child.task)}`,
          ),
        ];
      if (child.state === "running") return [];
      const line = `⇠ ${child.mode === "fork" ? "fork" : "subagent"} ${short(child.childId)} ${childStateLabel(child.state)}`;
      return [child.state === "completed" ? p.dim(line) : p.yellow(line)];
    }
    case "approval": {
      const { approval } = item;
      if (approval.answer === undefined) return [];
      const line = `approval: ${approval.answer} for ${sanitize(approval.tool)}`;
      return [approval.answer === "deny" || approval.answer === "cancel" ? p.yellow(line) : p.dim(line)];
    }
    case "question": {
      const { question } = item;
      if (question.answers === undefined) return [];
      return question.questions.map((q, i) => {
        const asked = typeof q === "string" ? q : String((q as { question?: unknown }).question ?? "");
        const answer = question.answers?.[i];
        return p.dim(
          `? ${firstLine(asked)} → ${answer === undefined ? "(no answer)" : firstLine(String(answer))}`,
        );
      });
    }
    case "retry":
      return [
        p.yellow(
          `retrying after ${sanitize(item.error.code)} (attempt ${item.attempt}) in ${Math.round(item.delayMs / 100) / 10}s`,
        ),
      ];
    case "compaction": {
      const c = item.compaction;
      if (!c.done) return added ? [p.dim("compacting the history…")] : [];
      if (!c.ok) return [p.yellow(`compaction failed: ${firstLine(c.error ?? "unknown error")}`)];
      const tokens =
        c.tokensBefore !== undefined && c.tokensAfter !== undefined
          ? ` (${c.tokensBefore} → ${c.tokensAfter} tokens)`
          : "";
      return [p.dim(`history compacted${tokens}`)];
    }
    case "git-repaired":
      return gitRepairLines(item).map((line) => p.yellow(sanitize(line)));
    case "job":
      if (added) return [p.dim(`⚙ job ${firstLine(item.label)} started`)];
      return [
        p.dim(
          `⚙ job ${firstLine(item.label)} ${sanitize(item.status ?? "ended")}${item.exitCode !== undefined ? ` (exit ${item.exitCode})` : ""}`,
        ),
      ];
    case "note":
      return [p.dim(sanitize(item.text))];
    default:
      return [];
  }
}
