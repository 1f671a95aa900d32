/**
 * The HTTP API's request and response schemas, declared once (TypeBox → JSON Schema). Fastify validates
 * requests with them and serializes responses with them, and `openapi.ts` publishes the same objects as
 * the OpenAPI document (INTERFACE.md "HTTP API").
 *
 * Every error is `{error: {code, message}}` with a 4xx or 5xx status.
 */
import { type Static, type TSchema, Type } from "typebox";

export const ErrorBody = Type.Object({
  error: Type.Object({ code: Type.String(), message: Type.String() }),
});

/**
 * A session id as the API takes it: printable ASCII without `/`, at most 100 characters
 * (the router's own limit on a path segment). Store ids are UUIDs; anything else that matches is a
 * well-formed unknown id (404). A NUL or any other character outside the set is a 400 before the store
 * sees it: PostgreSQL refuses a NUL in text with an error, which would be a 500.
 */
export const ID_PATTERN = "^[A-Za-z0-9_][A-Za-z0-9._:~-]{0,99}$";
export const Id = Type.String({ pattern: ID_PATTERN, maxLength: 100 });

export const SessionId = Type.Object({ id: Id });

/** What a session is doing for a person (./session-activity.ts). */
const SessionStateSchema = Type.Union([
  Type.Literal("running"),
  Type.Literal("waiting"),
  Type.Literal("idle"),
  Type.Literal("errored"),
  Type.Literal("aborted"),
]);

export const Session = Type.Object({
  id: Type.String(),
  parentId: Type.Union([Type.String(), Type.Null()]),
  kind: Type.String(),
  title: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  archived: Type.Boolean(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  lastSeq: Type.Integer(),
  /** The directory it runs in (`null`: not recorded); the dashboard filters by it. */
  workspace: Type.Union([Type.String(), Type.Null()]),
  /** The server driving it now, if any (a live lease); idle sessions have none. */
  drivenBy: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  /**
   * What it is doing for a person (./session-activity.ts; on the list and the detail): `waiting` on an
   * approval or a question, `running`, or idle after a last turn that ended well (`idle`), in an error
   * (`errored`) or cancelled (`aborted`).
   */
  state: Type.Optional(SessionStateSchema),
  /** With `waiting`: what it waits for. */
  waitingFor: Type.Optional(Type.Array(Type.Union([Type.Literal("approval"), Type.Literal("question")]))),
  /** How its last finished turn ended (`turn/end` reason), `null` when none was found. */
  lastTurn: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type SessionView = Static<typeof Session>;

const usageCounts = {
  /** Model requests whose usage the log records (a retried request once). */
  requests: Type.Integer(),
  /** Uncached input tokens (M20: disjoint from `cachedInput`). */
  input: Type.Integer(),
  /** Input tokens read from the provider's cache. */
  cachedInput: Type.Integer(),
  output: Type.Integer(),
  /** The reasoning part of `output`. */
  reasoning: Type.Integer(),
};

/** M20: the session's own usage, its cost in USD (`null`: no known price), and with its children. */
export const SessionUsage = Type.Object({
  ...usageCounts,
  cost: Type.Union([Type.Number(), Type.Null()]),
  withChildren: Type.Object({ ...usageCounts, cost: Type.Union([Type.Number(), Type.Null()]) }),
});
export type SessionUsageView = Static<typeof SessionUsage>;

/** `GET /v1/sessions/:id`: the session with its usage. */
export const SessionDetail = Type.Object({ ...Session.properties, usage: SessionUsage });

export const MessageMode = Type.Union([Type.Literal("followup"), Type.Literal("steer")]);

export const CreateSessionBody = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 500 })),
    /** A first message, sent as a follow-up. */
    text: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

export const ListSessionsQuery = Type.Object({
  /**
   * Only sessions in this state (the list's "needs you" filter is `waiting`). A page may then hold fewer
   * rows than `limit` and still have a `nextCursor`: the server reads a bounded number of sessions per page.
   */
  state: Type.Optional(SessionStateSchema),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  /** The next page of the by-activity order: the `nextCursor` of the page before. */
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
  /** Only sessions whose id or title contains this text (ASCII letters without case). */
  query: Type.Optional(Type.String({ maxLength: 200 })),
  /** Pages by creation instead (newest id first): the sessions created before this id. */
  before: Type.Optional(Id),
  archived: Type.Optional(Type.Boolean()),
  /** Only sessions that run in exactly this directory. */
  workspace: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
});

export const SessionList = Type.Object({
  sessions: Type.Array(Session),
  /** More sessions follow in the by-activity order: pass this as `cursor` for them. */
  nextCursor: Type.Optional(Type.String()),
});

export const RenameBody = Type.Object(
  { title: Type.Union([Type.String({ minLength: 1, maxLength: 500 }), Type.Null()]) },
  { additionalProperties: false },
);

/** `GET /v1/sessions/:id/messages`: messages queued and not yet taken by the model. */
export const PendingMessages = Type.Object({
  pending: Type.Array(
    Type.Object({ id: Type.String(), mode: MessageMode, text: Type.String(), createdAt: Type.String() }),
  ),
});

export const HistoryQuery = Type.Object({
  /** Events with a seq above this one (default 0). */
  after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 5_000 })),
});

/** A page of the stored log, each event as the stream's `data:` (gzip when the client accepts it). */
export const HistoryPage = Type.Object({
  events: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  /** The session's last seq when the page was read. */
  lastSeq: Type.Integer(),
  /** More events follow this page: ask again with `after` = the last seq in it. */
  more: Type.Boolean(),
});

export const ArchiveBody = Type.Object(
  { archived: Type.Optional(Type.Boolean({ default: true })) },
  { additionalProperties: false },
);

export const MessageBody = Type.Object(
  { text: Type.String({ minLength: 1 }), mode: Type.Optional(MessageMode) },
  { additionalProperties: false },
);

export const Accepted = Type.Object({
  id: Type.String(),
  sessionId: Type.String(),
  mode: Type.String(),
});

export const CancelResult = Type.Object({
  /** `local`: this server drove it and aborted the turn; `remote`: another server was asked; `idle`: nothing ran. */
  outcome: Type.Union([Type.Literal("local"), Type.Literal("remote"), Type.Literal("idle")]),
  discarded: Type.Integer(),
});

export const EventsQuery = Type.Object({
  /** A seq: at most 2^53 − 1, which every store's seq column holds (PostgreSQL's bigint would refuse 1e99). */
  after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  /** Include ephemeral text/reasoning deltas (`event: delta`) while this server drives the session. */
  deltas: Type.Optional(Type.Boolean({ default: true })),
});

export const Approval = Type.Object({
  id: Type.String(),
  callId: Type.String(),
  tool: Type.String(),
  summary: Type.String(),
  reason: Type.Optional(Type.String()),
  seq: Type.Integer(),
});
export const Question = Type.Object({
  id: Type.String(),
  callId: Type.String(),
  questions: Type.Array(Type.Unknown()),
  seq: Type.Integer(),
});
export const PendingInteractions = Type.Object({
  approvals: Type.Array(Approval),
  questions: Type.Array(Question),
});

export const ApprovalDecision = Type.Union([
  Type.Literal("allow-once"),
  Type.Literal("allow-session"),
  Type.Literal("deny"),
  Type.Literal("cancel"),
]);

export const AnswerBody = Type.Union([
  Type.Object({ approvalId: Type.String(), decision: ApprovalDecision }, { additionalProperties: false }),
  Type.Object(
    { questionId: Type.String(), answers: Type.Array(Type.String(), { minItems: 1, maxItems: 4 }) },
    { additionalProperties: false },
  ),
]);

export const AnswerAccepted = Type.Object({ id: Type.String(), queued: Type.Boolean() });

/** The dashboard's sign-in (./dashboard-session.ts): the server's token, sent once. */
export const SignInBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 1024 }) });
export const SignInState = Type.Object({ signedIn: Type.Boolean() });

export const Goal = Type.Object({
  goal: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
});

export const GoalBody = Type.Object(
  {
    action: Type.Union([
      Type.Literal("create"),
      Type.Literal("edit"),
      Type.Literal("pause"),
      Type.Literal("resume"),
      Type.Literal("clear"),
    ]),
    objective: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

export const GoalResult = Type.Object({
  message: Type.String(),
  goal: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
});

export const Health = Type.Object({ ok: Type.Boolean(), owner: Type.Optional(Type.String()) });
export const Ready = Type.Object({
  ready: Type.Boolean(),
  store: Type.String(),
  sessions: Type.Optional(Type.Object({ cached: Type.Integer(), running: Type.Integer() })),
});

/** One route's schema, as Fastify takes it and as the OpenAPI document publishes it. */
export type RouteSchema = {
  summary: string;
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  response: Record<number, TSchema>;
  /** `text/event-stream` instead of JSON (documented, not serialized by Fastify). */
  eventStream?: boolean;
  /** A file's bytes on 200 (`application/octet-stream` in the document, not serialized by Fastify). */
  download?: boolean;
  /** The 200 response is text of this media type (the Prometheus exposition), sent as it is. */
  textMedia?: string;
};

export const errorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
};
