/**
 * Every model-visible text of the subagent service (S1–S5), in one place. The summary lines of a
 * settlement, the "started subagent <id>" result and the "Agent <id> sent a message: " prefix are the
 * seed's exact strings; the descriptions and prompt paragraphs carry the seed's meaning in our words.
 */
import type { TurnEndReason } from "../log/events.js";

// --- S2: the launch tools ---

export const SUBAGENT_DESCRIPTION =
  "Hand a self-contained task to a subagent: a separate agent with a context of its own that does focused, independent work (research, a scoped change, an analysis) so it does not fill this conversation. You get its result, not its intermediate steps.";

export const SUBAGENT_FORK_DESCRIPTION =
  "Hand a task to a subagent that starts from this conversation: it is seeded with every completed turn so far (it does not see the turn in progress), so it knows what you know without being told.";

/** S2: appended to both launch descriptions. */
export const LAUNCH_SUFFIX =
  " The call starts the subagent and returns its id at once; you are notified when it finishes. It reports back with `send_message`; use `send_message` yourself to steer it while it runs, or to give it more work after it has finished.";

export const startedText = (childId: string): string => `started subagent ${childId}`;

// --- S5: the control tools ---

export const SEND_MESSAGE_DESCRIPTION =
  "Send a message to another agent of this session tree: your parent agent, or one of your subagents, by id. It wakes the receiver if it is idle. Sending does not end your turn.";

export const INTERRUPT_AGENT_DESCRIPTION =
  "Stop one of your running subagents at its next safe point. It settles as stopped and you are notified; send it a message later to continue its work.";

export const LIST_AGENTS_DESCRIPTION =
  "List your subagents: id, kind, state and task. You are notified when a subagent finishes, so there is no need to check on it again and again.";

/** S5: the prefix of a delivered message (exact). */
export const agentMessageText = (fromId: string, message: string): string =>
  `Agent ${fromId} sent a message: ${message}`;

// --- S4: structured output ---

export const STRUCTURED_OUTPUT_DESCRIPTION =
  "Report your final structured result. Call it once, when your answer is complete, with arguments that match this tool's parameter schema exactly.";

export const STRUCTURED_OUTPUT_SECTION =
  "When your answer is ready you must report it by calling the `structured_output` tool with arguments that match its parameter schema exactly. Do not finish with a plain text answer: only that tool call counts as your result.";

export const structuredAlreadyText = (json: string): string => `structured output already recorded: ${json}`;

export const STRUCTURED_BUSY_TEXT =
  "structured_output cannot be recorded yet: this agent still has running subagents or undelivered messages; wait for them to settle, then report";

// --- S1, SP4: what a child is told ---

/** S1: appended to a child's runtime context when it has send_message. */
export const reportToParentText = (parentId: string): string =>
  `Your parent agent's id is ${JSON.stringify(parentId)}. Before you finish, send it your result with send_message({ agent_id: ${JSON.stringify(parentId)}, message: "<a self-contained result>" }). The parent shares your workspace but does not see your transcript, your tool output or your reasoning. Send earlier messages too when something you find changes what the parent should do next; sending a message does not end your turn.`;

/** SP4: only at the depth cap. */
export const depthCapText = (depth: number, max: number): string =>
  `Delegation depth for \`subagent\`: current ${depth}, maximum ${max}, remaining levels 0. Do not call \`subagent\` at this depth; do the work yourself.`;

// --- refusals ---

export const ACTIVATION_LIMIT_CODE = "ACTIVATION_LIMIT_REACHED";

export const activationLimitText = (max: number): string =>
  `${ACTIVATION_LIMIT_CODE}: ${max} subagents are already active in this session tree; no more can start until one settles`;

export const depthLimitText = (depth: number, max: number): string =>
  `DEPTH_LIMIT_REACHED: this agent is at delegation depth ${depth} of ${max} and cannot start subagents; do the work yourself`;

export const notYourAgentText = (id: string): string =>
  `no agent ${JSON.stringify(id)} in reach: send_message and interrupt_agent take your parent's id or the id of one of your own subagents`;

export const NO_ACTIVE_PARENT = "No active parent session";

// --- S3: settlement ---

/** S3: the summary line by how the child's work ended. */
export function settlementSummary(childId: string, reason: TurnEndReason): string {
  const head = `Background subagent ${childId}`;
  switch (reason) {
    case "completed":
      return `${head} finished and will do no further work unless you send it more.`;
    case "aborted":
      return `${head} was stopped before it finished.`;
    case "max-tokens":
      return `${head} ran out of room before it finished.`;
    case "blocked":
      return `${head} declined the task.`;
    case "interrupted":
      return `${head} was interrupted before it finished: the process driving it stopped, and its work was not resumed.`;
    default:
      return `${head} failed before it finished.`;
  }
}

export const CLOSING_MESSAGE_HEAD = "Its closing message:";
export const NO_CLOSING_MESSAGE = "It left no closing message.";
export const structuredResultLine = (json: string): string => `Structured result: ${json}`;
export const diagnosticLine = (text: string): string => `Diagnostic: ${text}`;

/** S3: a diagnostic is at most this many bytes (UTF-8). */
export const MAX_DIAGNOSTIC_BYTES = 4096;
