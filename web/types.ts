/**
 * The shapes the dashboard reads, taken from the server's own definitions (type-only imports: nothing of
 * the server reaches the bundle), so the page and the API cannot drift apart.
 */
import type { Static } from "typebox";
import type {
  Approval as ApprovalSchema,
  PendingInteractions as PendingSchema,
  Question as QuestionSchema,
  SessionDetail as SessionDetailSchema,
} from "../src/server/schemas.js";
import type { AgentView as AgentSchema } from "../src/server/subagent-schemas.js";

export type { EventDataMap, EventType, GoalSnapshot, LogEvent, Usage } from "../src/log/events.js";
export type { SessionView } from "../src/server/schemas.js";

export type SessionDetail = Static<typeof SessionDetailSchema>;
export type Approval = Static<typeof ApprovalSchema>;
export type Question = Static<typeof QuestionSchema>;
export type PendingInteractions = Static<typeof PendingSchema>;
export type ChildAgent = Static<typeof AgentSchema>;

/** The reply streamed so far when the stream attaches mid-reply (`event: live`). */
export type { LiveReply } from "../src/transcript/items.js";

/** An ephemeral text or reasoning delta of the stream (`event: delta`). */
export type Delta = { type: "text" | "reasoning"; delta: string; turn: number; step: number };
