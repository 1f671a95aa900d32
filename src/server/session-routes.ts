/**
 * Sessions, messages and cancel (L4, L7, L18, S1).
 *
 * Invariants:
 * - A message is an inbox row (L4), never a direct call into an agent: enqueuing NOTIFYs every server, and
 *   whichever takes the lease drives it. This server also wakes its runner at once (the fast path).
 * - Cancel works from any server: the driving server aborts the turn (L7); from another server the
 *   pending inbox is discarded (L7 clears it) and an inert cancel marker row is queued, which the driving
 *   server's runner turns into `agent.cancel()`.
 */
import { createHash } from "node:crypto";
import type { Static } from "typebox";
import { forkSession } from "../loop/fork.js";
import { startSession } from "../loop/new-session.js";
import { contextFromHeaders, traced } from "../loop/trace-carrier.js";
import { costOf, type Price } from "../model/pricing.js";
import { sessionUsage } from "../presets/session-usage.js";
import {
  type ActivityCursor,
  type ListSessionsOptions,
  SessionArchivedError,
  SessionNotFoundError,
  type SessionRow,
  type Store,
  sessionLeaseName,
} from "../store/store.js";
import { ApiError, notFound } from "./api-error.js";
import type { RouteTable } from "./openapi.js";
import {
  Accepted,
  ArchiveBody,
  CancelResult,
  CreateSessionBody,
  errorResponses,
  ListSessionsQuery,
  MessageBody,
  PendingMessages,
  RenameBody,
  Session,
  SessionDetail,
  SessionId,
  SessionList,
  type SessionUsageView,
  type SessionView,
} from "./schemas.js";
import { sessionActivity } from "./session-activity.js";
import type { SessionRunner } from "./session-runner.js";

export type SessionRoutesContext = {
  store: Store;
  runner: SessionRunner;
  workspace: string;
  /** M20: the price of the server's model (`model.price` over the table); undefined: cost unknown. */
  price?: Price | undefined;
};

export function viewOf(row: SessionRow, drivenBy?: string | null): SessionView {
  const { metadata, ...rest } = row;
  const workspace = typeof metadata.workspace === "string" ? metadata.workspace : null;
  return drivenBy === undefined ? { ...rest, workspace } : { ...rest, workspace, drivenBy };
}

export async function requireSession(store: Store, id: string): Promise<SessionRow> {
  const row = await store.getSession(id);
  if (!row) throw notFound(id);
  return row;
}

/** M20: the `usage` object of the session resource; children (S1) roll up into `withChildren`. */
export async function usageView(
  store: Store,
  id: string,
  price: Price | undefined,
): Promise<SessionUsageView> {
  const { own, withChildren, cost } = await sessionUsage(store, id, price);
  const counts = (u: typeof own) => ({
    requests: u.requests,
    input: u.input,
    cachedInput: u.cachedInput,
    output: u.output,
    reasoning: u.reasoning,
  });
  return {
    ...counts(own),
    cost: costOf(own, price) ?? null,
    withChildren: { ...counts(withChildren), cost: cost ?? null },
  };
}

export function registerSessionRoutes(routes: RouteTable, context: SessionRoutesContext): void {
  const { store, runner } = context;

  routes.add(
    "POST",
    "/v1/sessions",
    {
      summary: "Create a session (optionally with a first message)",
      body: CreateSessionBody,
      response: { 201: Session, ...errorResponses },
    },
    async (request, reply) => {
      const body = (request.body ?? {}) as Static<typeof CreateSessionBody>;
      const session = await startSession(store, { workspace: context.workspace, title: body.title });
      if (body.text) {
        await runner.submit(
          session.id,
          traced(
            { queue: "next-turn", mode: "followup", source: "human", text: body.text },
            contextFromHeaders(request.headers),
          ),
        );
      }
      reply.status(201);
      return viewOf(session);
    },
  );

  routes.add(
    "GET",
    "/v1/sessions",
    {
      summary:
        "List sessions, most recently active first (paged with cursor; with before: newest first), with their state",
      querystring: ListSessionsQuery,
      response: { 200: SessionList, ...errorResponses },
    },
    async (request, reply) => {
      const query = request.query as Static<typeof ListSessionsQuery>;
      const limit = query.limit ?? 50;
      if (query.before && query.cursor)
        throw new ApiError(400, "BAD_REQUEST", "before pages by creation, cursor by activity: not both");
      const byActivity = !query.before;
      if (query.state && !byActivity)
        throw new ApiError(400, "BAD_REQUEST", "state filters the by-activity order: use cursor, not before");
      const filters = {
        includeArchived: query.archived ?? false,
        ...(query.query ? { query: query.query } : {}),
        ...(query.workspace ? { workspace: query.workspace } : {}),
      };
      const withActivity = async (row: SessionRow) => ({
        ...viewOf(row),
        ...(await sessionActivity(store, row)),
      });
      let body: Static<typeof SessionList>;
      if (query.state) {
        body = await sessionsInState(store, query.state, limit, filters, query.cursor, withActivity);
      } else {
        // One more row than asked tells whether a next page exists.
        const rows = await store.listSessions({
          ...filters,
          limit: byActivity ? limit + 1 : limit,
          ...(byActivity ? { order: "activity" as const } : { before: query.before }),
          ...(query.cursor ? { after: decodeCursor(query.cursor) } : {}),
        });
        const page = rows.slice(0, limit);
        const sessions = await Promise.all(page.map(withActivity));
        const last = page.at(-1);
        body =
          byActivity && rows.length > limit && last
            ? { sessions, nextCursor: encodeCursor({ updatedAt: last.updatedAt, id: last.id }) }
            : { sessions };
      }
      // A list polled every few seconds: an unchanged page is a 304 with no body.
      const etag = `"${createHash("sha256").update(JSON.stringify(body)).digest("base64url").slice(0, 27)}"`;
      void reply.header("etag", etag).header("cache-control", "no-cache");
      if (ifNoneMatch(request.headers["if-none-match"], etag)) return reply.code(304).send();
      return body;
    },
  );

  routes.add(
    "PATCH",
    "/v1/sessions/:id",
    {
      summary: "Rename a session (title null: no title)",
      params: SessionId,
      body: RenameBody,
      response: { 200: Session, ...errorResponses },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SessionId>;
      const body = request.body as Static<typeof RenameBody>;
      await requireSession(store, id);
      return viewOf(await store.updateSession(id, { title: body.title?.trim() || null }));
    },
  );

  routes.add(
    "GET",
    "/v1/sessions/:id/messages",
    {
      summary: "Messages queued for the session (follow-ups and steers) that the model has not taken yet",
      params: SessionId,
      response: { 200: PendingMessages, ...errorResponses },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SessionId>;
      await requireSession(store, id);
      const pending = (await store.pendingInbox(id)).filter(
        (item) => item.mode === "followup" || item.mode === "steer",
      );
      return {
        pending: pending.map((item) => ({
          id: item.id,
          mode: item.mode as "followup" | "steer",
          text: item.text,
          createdAt: item.createdAt,
        })),
      };
    },
  );

  routes.add(
    "GET",
    "/v1/sessions/:id",
    {
      summary: "A session with its token usage and cost, and the server driving it now (if any)",
      params: SessionId,
      response: { 200: SessionDetail, ...errorResponses },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SessionId>;
      const row = await requireSession(store, id);
      const lease = await store.getLease(sessionLeaseName(id));
      return {
        ...viewOf(row, lease?.owner ?? null),
        ...(await sessionActivity(store, row)),
        usage: await usageView(store, id, context.price),
      };
    },
  );

  routes.add(
    "POST",
    "/v1/sessions/:id/archive",
    {
      summary: "Archive (or unarchive) a session: later turns end blocked",
      params: SessionId,
      body: ArchiveBody,
      response: { 200: Session, ...errorResponses },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SessionId>;
      const body = (request.body ?? {}) as Static<typeof ArchiveBody>;
      await requireSession(store, id);
      return viewOf(await store.updateSession(id, { archived: body.archived ?? true }));
    },
  );

  routes.add(
    "POST",
    "/v1/sessions/:id/fork",
    {
      summary: "Fork a session at its last finished turn",
      params: SessionId,
      response: { 201: Session, ...errorResponses },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SessionId>;
      await requireSession(store, id);
      const child = await forkSession(store, id);
      reply.status(201);
      return viewOf(child);
    },
  );

  routes.add(
    "POST",
    "/v1/sessions/:id/messages",
    {
      summary: "Queue a message: followup (next turn) or steer (next step of the running turn)",
      params: SessionId,
      body: MessageBody,
      response: { 202: Accepted, ...errorResponses },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof SessionId>;
      const body = request.body as Static<typeof MessageBody>;
      const mode = body.mode ?? "followup";
      // A caller's `traceparent` travels with the row to whichever server runs the turn. One statement
      // checks the session (unknown: 404, archived: 409) and queues the message (and, with room here,
      // claims the session for this server: SessionRunner.submit).
      const item = await runner
        .submit(
          id,
          traced(
            { queue: mode === "steer" ? "next-step" : "next-turn", mode, source: "human", text: body.text },
            contextFromHeaders(request.headers),
          ),
          { refuseArchived: true },
        )
        .catch((error: unknown) => {
          if (error instanceof SessionNotFoundError) throw notFound(id);
          if (error instanceof SessionArchivedError)
            throw new ApiError(409, "ARCHIVED", `session ${id} is archived; unarchive or fork it`);
          throw error;
        });
      reply.status(202);
      return { id: item.id, sessionId: id, mode };
    },
  );

  routes.add(
    "POST",
    "/v1/sessions/:id/cancel",
    {
      summary: "Cancel the running turn and clear the pending inbox",
      params: SessionId,
      response: { 200: CancelResult, ...errorResponses },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SessionId>;
      await requireSession(store, id);
      const pending = await store.pendingInbox(id);
      const discarded = pending.length
        ? await store.discardInbox(
            id,
            pending.map((p) => p.id),
          )
        : 0;
      const lease = await store.getLease(sessionLeaseName(id));
      if (!lease) return { outcome: "idle" as const, discarded };
      if (lease.owner === runner.owner) {
        const agent = await runner.cachedAgent(id);
        await agent?.cancel();
        return { outcome: "local" as const, discarded };
      }
      await store.requestCancel(id); // the driver takes it and cancels (L7)
      return { outcome: "remote" as const, discarded };
    },
  );
}

/** A listing cursor as the API hands it out: opaque to clients (base64url of the place in the order). */
function encodeCursor(cursor: ActivityCursor): string {
  return Buffer.from(JSON.stringify([cursor.updatedAt, cursor.id])).toString("base64url");
}

function decodeCursor(text: string): ActivityCursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    value = undefined;
  }
  if (
    Array.isArray(value) &&
    value.length === 2 &&
    typeof value[0] === "string" &&
    !Number.isNaN(Date.parse(value[0])) &&
    typeof value[1] === "string"
  )
    return { updatedAt: value[0], id: value[1] };
  throw new ApiError(400, "BAD_REQUEST", "cursor is not one this server handed out");
}

function ifNoneMatch(header: string | string[] | undefined, etag: string): boolean {
  const value = Array.isArray(header) ? header.join(",") : header;
  return value?.split(",").some((tag) => tag.trim() === etag || tag.trim() === "*") ?? false;
}

/** How many sessions one page of a state filter reads at most; the rest is behind the page's cursor. */
const STATE_SCAN_LIMIT = 1_000;
const STATE_SCAN_BATCH = 100;

/**
 * A page of the sessions in one state, in the by-activity order. The state comes from each session's log, so
 * the server reads sessions in batches and keeps the matching ones; a page stops at `limit` matches or after
 * `STATE_SCAN_LIMIT` sessions read, with a cursor where it stopped (a page can then be short, even empty,
 * and still have one). Only a running session can be `running` or `waiting`, so the others' logs are not read.
 */
async function sessionsInState(
  store: Store,
  state: NonNullable<SessionView["state"]>,
  limit: number,
  filters: Pick<ListSessionsOptions, "includeArchived" | "query" | "workspace">,
  cursor: string | undefined,
  withActivity: (row: SessionRow) => Promise<SessionView>,
): Promise<Static<typeof SessionList>> {
  const wantsRunning = state === "running" || state === "waiting";
  const sessions: SessionView[] = [];
  let after = cursor === undefined ? undefined : decodeCursor(cursor);
  for (let scanned = 0; scanned < STATE_SCAN_LIMIT; ) {
    const rows = await store.listSessions({
      ...filters,
      order: "activity",
      limit: STATE_SCAN_BATCH,
      ...(after ? { after } : {}),
    });
    const candidates = rows.filter((row) => (row.status === "running") === wantsRunning);
    const views = await Promise.all(candidates.map(withActivity));
    for (const [i, view] of views.entries()) {
      if (view.state !== state) continue;
      sessions.push(view);
      if (sessions.length === limit) {
        const row = candidates[i]!;
        return { sessions, nextCursor: encodeCursor({ updatedAt: row.updatedAt, id: row.id }) };
      }
    }
    if (rows.length < STATE_SCAN_BATCH) return { sessions };
    scanned += rows.length;
    const last = rows.at(-1)!;
    after = { updatedAt: last.updatedAt, id: last.id };
  }
  return after ? { sessions, nextCursor: encodeCursor(after) } : { sessions };
}
