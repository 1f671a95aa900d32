/**
 * The Hermes subagent lifecycle API over HTTP: `POST /v1/subagents/{status|wait|cancel|
 * result|reconnect}` with `{"handle": …}`, answering exactly what `SubagentLifecycle` answers, and
 * `GET /v1/sessions/:id/agents`, a session's delegated children with their states (S1).
 *
 * Invariants:
 * - Domain answers are 200s with the lifecycle's own body: a forged, malformed, truncated or re-versioned
 *   handle is `200 {state: "UNKNOWN", code: "UNKNOWN_HANDLE"}`, the same body whatever is wrong with it (the
 *   handle's shape is not validated here, so no 400 tells one forgery from another); `NOT_FINISHED` and
 *   `RESULT_EXPIRED` are answers too. 4xx are for requests the API cannot read (no body, an unknown field,
 *   no token, …), in the shape of every refusal (`{error: {code, message}}`).
 * - The handle is the capability: it names its parent and child and is verified (HMAC, constant-time)
 *   before anything about the child is read; the bearer token only admits the caller to the API.
 * - State comes from the store, so any server answers for any child, whichever server drives it; a cancel
 *   travels through the store to the driving server (the plugin's `children` driver).
 * - `wait` holds the request at most `MAX_WAIT_MS` (`timeout_ms` above it is lowered to it) and answers
 *   `{timedOut: true}` rather than an error when the child is still working; it stops waiting when the
 *   client closes the connection.
 */
import type { Static } from "typebox";
import type { Config } from "../config/schema.js";
import type { Store } from "../store/store.js";
import { childrenOf, childView } from "../subagents/ledger.js";
import { type ChildDriver, SubagentLifecycle } from "../subagents/lifecycle.js";
import { subagentSettingsFrom } from "../subagents/plugin.js";
import type { RouteTable } from "./openapi.js";
import { errorResponses, SessionId } from "./schemas.js";
import { requireSession } from "./session-routes.js";
import {
  AgentList,
  CancelBody,
  HandleBody,
  SubagentReconnect,
  SubagentResult,
  SubagentStatus,
  SubagentWait,
  WaitBody,
} from "./subagent-schemas.js";

/** The longest a `wait` request is held (a longer `timeout_ms` is lowered to it; the client asks again). */
export const MAX_WAIT_MS = 60_000;
/** `wait` without `timeout_ms`. */
export const DEFAULT_WAIT_MS = 30_000;

export type SubagentRoutesContext = {
  store: Store;
  /** The plugin's driver: a cancel reaches the server driving the child through the store. */
  children: ChildDriver;
  config: Config;
};

export function registerSubagentRoutes(routes: RouteTable, context: SubagentRoutesContext): void {
  const { store } = context;
  const lifecycle = new SubagentLifecycle(store, context.children, {
    resultRetentionMs: subagentSettingsFrom(context.config.subagents).resultRetentionMs,
  });
  const answers = { 200: SubagentStatus, ...errorResponses };

  routes.add(
    "POST",
    "/v1/subagents/status",
    { summary: "A subagent's lifecycle state, by its handle", body: HandleBody, response: answers },
    async (request) => lifecycle.status((request.body as Static<typeof HandleBody>).handle),
  );

  routes.add(
    "POST",
    "/v1/subagents/wait",
    {
      summary: `Wait until a subagent is terminal, at most timeout_ms (default ${DEFAULT_WAIT_MS}, at most ${MAX_WAIT_MS})`,
      body: WaitBody,
      response: { 200: SubagentWait, ...errorResponses },
    },
    async (request, reply) => {
      const body = request.body as Static<typeof WaitBody>;
      const timeoutMs = Math.min(body.timeout_ms ?? DEFAULT_WAIT_MS, MAX_WAIT_MS);
      // A client that went away stops the wait (its store subscription with it); after the answer, a no-op.
      const gone = new AbortController();
      reply.raw.once("close", () => gone.abort());
      return lifecycle.wait(body.handle, { timeoutMs, signal: gone.signal });
    },
  );

  routes.add(
    "POST",
    "/v1/subagents/cancel",
    {
      summary: "Ask a subagent to stop (cooperative: CANCEL_REQUESTED until it settles)",
      body: CancelBody,
      response: answers,
    },
    async (request) => {
      const body = request.body as Static<typeof CancelBody>;
      return lifecycle.cancel(body.handle, body.reason === undefined ? {} : { reason: body.reason });
    },
  );

  routes.add(
    "POST",
    "/v1/subagents/result",
    {
      summary: "A subagent's terminal result (immutable, hashed), or NOT_FINISHED / RESULT_EXPIRED",
      body: HandleBody,
      response: { 200: SubagentResult, ...errorResponses },
    },
    async (request) => lifecycle.result((request.body as Static<typeof HandleBody>).handle),
  );

  routes.add(
    "POST",
    "/v1/subagents/reconnect",
    {
      summary: "Pick a handle up again (after a restart, on any server): its state and the handle",
      body: HandleBody,
      response: { 200: SubagentReconnect, ...errorResponses },
    },
    async (request) => lifecycle.reconnect((request.body as Static<typeof HandleBody>).handle),
  );

  routes.add(
    "GET",
    "/v1/sessions/:id/agents",
    {
      summary: "The session's subagents (spawned and forked), oldest first, with their states",
      params: SessionId,
      response: { 200: AgentList, ...errorResponses },
    },
    async (request) => {
      const { id } = request.params as Static<typeof SessionId>;
      await requireSession(store, id);
      const agents = [];
      for (const row of await childrenOf(store, id)) {
        const view = await childView(store, row.id);
        if (!view) continue;
        agents.push({
          id: view.id,
          kind: row.kind,
          mode: view.mode,
          state: view.state,
          active: view.active,
          task: view.task,
          ...(view.correlationId === undefined ? {} : { correlationId: view.correlationId }),
          ...(view.settled ? { settledAt: view.settled.at } : {}),
        });
      }
      return { agents };
    },
  );
}
