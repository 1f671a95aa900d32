/**
 * The bodies of the subagent lifecycle API (./subagent-routes.ts), apart from the routes so that the
 * dashboard (web/) can take their types without the server's code.
 */
import { Type } from "typebox";
import { LIFECYCLE_STATES } from "../subagents/states.js";

export const State = Type.Union(LIFECYCLE_STATES.map((state) => Type.Literal(state)));

/** A `SubagentHandle` as issued: `{version, childId, parentId, correlationId?, capability}`. */
export const Handle = Type.Object({
  version: Type.Integer(),
  childId: Type.String(),
  parentId: Type.String(),
  correlationId: Type.Optional(Type.String()),
  capability: Type.String(),
});

/** Any JSON as the handle: a bad one is an answer (UNKNOWN_HANDLE), not a validation error. */
export const HandleBody = Type.Object({ handle: Type.Unknown() }, { additionalProperties: false });

export const WaitBody = Type.Object(
  { handle: Type.Unknown(), timeout_ms: Type.Optional(Type.Integer({ minimum: 0 })) },
  { additionalProperties: false },
);

export const CancelBody = Type.Object(
  { handle: Type.Unknown(), reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) },
  { additionalProperties: false },
);

/** `code` only in the UNKNOWN_HANDLE answer. */
export const SubagentStatus = Type.Object({
  state: State,
  code: Type.Optional(Type.Literal("UNKNOWN_HANDLE")),
  correlationId: Type.Optional(Type.String()),
});

export const SubagentWait = Type.Object({
  state: State,
  code: Type.Optional(Type.Literal("UNKNOWN_HANDLE")),
  timedOut: Type.Optional(Type.Boolean()),
});

/** A terminal result, or `{state, code}` (UNKNOWN_HANDLE, NOT_FINISHED, RESULT_EXPIRED). */
export const SubagentResult = Type.Object({
  state: State,
  code: Type.Optional(
    Type.Union([
      Type.Literal("UNKNOWN_HANDLE"),
      Type.Literal("NOT_FINISHED"),
      Type.Literal("RESULT_EXPIRED"),
    ]),
  ),
  /** The child's closing message, at most 32,000 characters. */
  text: Type.Optional(Type.String()),
  /** S4: what the child reported through `structured_output`. */
  structured: Type.Optional(Type.Unknown()),
  /** SHA-256 (hex) of `text`. */
  hash: Type.Optional(Type.String()),
  truncated: Type.Optional(Type.Boolean()),
  /** How the child's turn ended (`turn/end` reason). */
  reason: Type.Optional(Type.String()),
  /** Why a failed child stopped (`<code>: <message>`, at most 4,096 bytes). */
  diagnostic: Type.Optional(Type.String()),
  settledAt: Type.Optional(Type.String()),
});

export const SubagentReconnect = Type.Object({
  state: State,
  code: Type.Optional(Type.Literal("UNKNOWN_HANDLE")),
  handle: Type.Optional(Handle),
});

export const AgentView = Type.Object({
  id: Type.String(),
  /** The session kind: `subagent` (spawned) or `fork`. */
  kind: Type.String(),
  mode: Type.Union([Type.Literal("spawn"), Type.Literal("fork")]),
  state: State,
  /** Busy now (a turn open or input waiting), whatever its first settlement said. */
  active: Type.Boolean(),
  task: Type.String(),
  correlationId: Type.Optional(Type.String()),
  settledAt: Type.Optional(Type.String()),
});

export const AgentList = Type.Object({ agents: Type.Array(AgentView) });
