/**
 * The model-visible texts of compaction (C7, C8, C11, C12), in our own words with the seed's structure.
 *
 * Model experience:
 * - the summary call ends with COMPACTION_INSTRUCTION as its final user message (C6, C7): the eight
 *   sections in the seed's order, "(none)" for empty ones, no tool calls, merge any prior checkpoint;
 * - the checkpoint replaces the summarised span as one user message: CHECKPOINT_PREAMBLE, then the summary
 *   inside `<compacted-summary>` … `</compacted-summary>` (C8);
 * - a pruned tool result keeps its head and tail around `[... tool result middle pruned ...]` (C12);
 * - after a compaction, the task state (todos, active goal) comes back in a `<system-reminder>` user
 *   message (beyond DSH), see ./reinjection.ts.
 * User-facing outcomes of `/compact` and `bdsh compact` (C11) are the seed's strings.
 */

export const COMPACTION_INSTRUCTION = `Stop here and write a checkpoint of the conversation above instead of continuing it. Another model will pick up the work from this checkpoint alone, so it must carry everything needed to continue without loss.

Reply with exactly the Markdown sections below, all of them, in this order. Use short bullets rather than paragraphs. When a section has nothing to say, write "(none)" under it; never leave a section out.

## Primary Request and Intent
- [what the user asked for and how that request changed over time; quote their words where the exact wording matters]

## Key Technical Concepts
- [languages, libraries, tools, patterns and conventions the work relies on]

## Files and Code
- [each exact path: why it matters, what changed, short snippets that must not be lost]

## Errors and Fixes
- [each error met: how it was fixed, and what the user said about it]

## Pending Jobs
- [work the user asked for that is not finished yet]

## Current Work
- [exactly what was being done when this checkpoint was taken]

## Next Step
- [the one next action, in line with the latest request; "(none)" when the work is done]

## Critical Context
- [decisions and why they were made, constraints, user preferences, open questions, data the next model needs]

Rules:
- Write plain, concise engineering English. Keep file paths, commands, error messages, identifiers, numbers, signatures and code fragments exactly as they appeared.
- Record the user's feedback and explicit instructions faithfully, corrections above all.
- Do not mention this request, checkpoints or that anything was condensed.
- Reply with the checkpoint text only: call no tool and take no other action.
- If the conversation above already holds a <compacted-summary> block, that is an earlier checkpoint. Do not copy it as it is: keep what is still true, drop what is outdated, and fold the newer information into one checkpoint with the same sections.`;

export const CHECKPOINT_PREAMBLE =
  "The following is a checkpoint that stands in for an earlier part of this conversation, condensed to make room in the context. Take what it records as settled background and build on it without repeating it. Carry on with the task from the messages after it, directly, without remarking on this checkpoint.";

export function checkpointText(summary: string): string {
  return `${CHECKPOINT_PREAMBLE}\n\n<compacted-summary>\n${summary.trim()}\n</compacted-summary>`;
}

/** A surface text that is a checkpoint (for "only a checkpoint left" and tests). */
export function isCheckpointText(text: string): boolean {
  return text.startsWith(CHECKPOINT_PREAMBLE);
}

export const PRUNE_MARKER = "\n\n[... tool result middle pruned ...]\n\n";

// C11 outcomes (user-facing, exact).
export const NOTHING_TO_COMPACT = "No compactable history yet.";
export const COMPACTION_BUSY =
  "Compaction is unavailable because this process has an active compaction, or the agent is not idle.";
export function compactedMessage(items: number, tokens: number): string {
  return `Compacted ${items} history items (~${tokens} tokens).`;
}
export function compactionFailedMessage(reason: string): string {
  return `Compaction failed: ${reason}. The history is unchanged.`;
}

// C4, C6, C10 error and log texts (seed wording).
export const SUMMARY_EMPTY = "summarization produced no text summary content";
export const SUMMARY_TRUNCATED = "summarization truncated at the token cap (incomplete checkpoint)";
export const SUMMARY_NOT_SMALLER = "summary is not smaller than the shadowed content";
export const SURFACE_CHANGED = "the session log changed during summarization";
export function stillAboveThreshold(attempts: number, tokens: number, threshold: number): string {
  return `compaction still above threshold after ${attempts} compaction attempts (${tokens} estimated tokens >= threshold ${threshold})`;
}
export function stepCompactionFailed(message: string): string {
  return `step compaction failed: ${message}; continuing the turn`;
}
export const OVERFLOW_UNRECOVERED =
  "context overflow recovery changed nothing; preserving the original request error";
