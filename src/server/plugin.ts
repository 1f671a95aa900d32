/**
 * `bdshPlugin`: the HTTP API as a Fastify plugin a host application registers on its own server
 * (issue 8 item 1). `bdsh serve` (src/cli/commands/serve.ts) is a thin standalone host around it.
 *
 *   const app = Fastify();
 *   await app.register(bdshPlugin, { store, config, workspace, token: process.env.BDSH_SERVER_TOKEN });
 *   await app.listen({ port: 8080 });
 *
 * Invariants:
 * - Encapsulated: the error handler, the auth hook and the routes apply only inside the plugin.
 * - Every `/v1` route needs `Authorization: Bearer <token>` when a token is given (the host decides whether
 *   one is required: `bdsh serve` refuses to bind a non-loopback address without one). `/healthz` and
 *   `/readyz` never need it.
 * - The plugin starts a SessionRunner on `onReady` and stops it on `onClose` (graceful shutdown: finish or
 *   cancel in-flight turns, release leases).
 */
import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config/schema.js";
import type { Agent } from "../loop/agent.js";
import type { Plugin } from "../loop/plugin.js";
import { defaultOwner, openAgent } from "../presets/open-agent.js";
import type { Store } from "../store/store.js";
import { ApiError, errorHandler } from "./api-error.js";
import { registerEventStream } from "./event-stream.js";
import { registerInteractionRoutes } from "./interaction-routes.js";
import { httpInteractionsPlugin } from "./interactions.js";
import { lostJobsPlugin } from "./lost-jobs.js";
import { RouteTable } from "./openapi.js";
import { Health, Ready } from "./schemas.js";
import { registerSessionRoutes } from "./session-routes.js";
import { SessionRunner } from "./session-runner.js";
import { strictValidator } from "./strict-validation.js";

export type BdshPluginOptions = {
  store: Store;
  config: Config;
  /** The workspace new sessions run in. */
  workspace: string;
  home?: string;
  env?: NodeJS.ProcessEnv;
  /** Bearer token every `/v1` request must carry; none: open (loopback only, the host's decision). */
  token?: string;
  /** This server's lease owner id (default: host:pid:random). */
  owner?: string;
  /** Opens a session's agent; default: the standard preset with store-backed approvals and questions. */
  open?: (sessionId: string, owner: string) => Promise<Agent>;
  /** Plugins appended to the standard preset of every agent this server opens. */
  plugins?: readonly Plugin[];
  onError?: (error: unknown, sessionId?: string) => void;
};

export async function bdshPlugin(app: FastifyInstance, options: BdshPluginOptions): Promise<void> {
  const { store, config } = options;
  app.setValidatorCompiler(strictValidator);
  const settings = config.server;
  const owner = options.owner ?? defaultOwner();
  const onError =
    options.onError ??
    ((error: unknown, id?: string) => app.log.error({ err: error, sessionId: id }, "session"));
  const open =
    options.open ??
    (async (sessionId: string) => {
      const { agent } = await openAgent({
        store,
        config,
        workspace: options.workspace,
        ...(options.home ? { home: options.home } : {}),
        ...(options.env ? { env: options.env } : {}),
        sessionId,
        owner,
        leaseTtlMs: settings.lease_ttl_ms,
        plugins: [
          httpInteractionsPlugin({ questionTimeoutMs: settings.question_timeout_ms }),
          lostJobsPlugin({ owner, leaseTtlMs: settings.lease_ttl_ms }),
          ...(options.plugins ?? []),
        ],
      });
      return agent;
    });
  const runner = new SessionRunner({
    store,
    owner,
    open: (id) => open(id, owner),
    sweepIntervalMs: settings.sweep_interval_ms,
    maxSessions: settings.max_sessions_per_server,
    maxRunning: Math.min(settings.max_running_per_server, settings.max_sessions_per_server),
    leaseTtlMs: settings.lease_ttl_ms,
    shutdownGraceMs: settings.shutdown_grace_ms,
    onError,
    evictable: (agent) =>
      !(
        agent.services
          .get("jobs")
          ?.list(agent.sessionId)
          .some((j) => j.state === "running") ?? false
      ),
  });

  app.setErrorHandler(errorHandler((error) => app.log.error({ err: error }, "request failed")));
  app.setNotFoundHandler((request, reply) => {
    void reply
      .status(404)
      .send({ error: { code: "NOT_FOUND", message: `no route ${request.method} ${request.url}` } });
  });
  const expected = options.token ? Buffer.from(options.token) : undefined;
  const authenticate = expected
    ? async (request: FastifyRequest, _reply: FastifyReply) => {
        const header = request.headers.authorization ?? "";
        const given = Buffer.from(header.startsWith("Bearer ") ? header.slice(7) : "");
        if (given.length !== expected.length || !timingSafeEqual(given, expected))
          throw new ApiError(401, "UNAUTHORIZED", "missing or wrong bearer token (BDSH_SERVER_TOKEN)");
      }
    : undefined;
  const routes = new RouteTable(app, {
    bodyLimit: settings.body_limit_bytes,
    ...(authenticate ? { authenticate } : {}),
  });

  routes.add(
    "GET",
    "/healthz",
    { summary: "The process is up", response: { 200: Health } },
    async () => ({ ok: true, owner }),
    false,
  );
  routes.add(
    "GET",
    "/readyz",
    { summary: "The store answers and the server takes work", response: { 200: Ready, 503: Ready } },
    async (_request, reply) => {
      const ok =
        !runner.stopped &&
        (await store.listSessions({ limit: 1 }).then(
          () => true,
          () => false,
        ));
      reply.status(ok ? 200 : 503);
      return { ready: ok, store: store.kind, sessions: runner.stats() };
    },
    false,
  );
  registerSessionRoutes(routes, { store, runner, workspace: options.workspace });
  registerEventStream(routes, { store, runner, keepAliveMs: 15_000 });
  registerInteractionRoutes(routes, { store, runner });
  routes.add(
    "GET",
    "/v1/openapi.json",
    { summary: "This document", response: { 200: { type: "object", additionalProperties: true } } },
    async (request) =>
      routes.document(
        { title: "better-dsh", version: "1" },
        request.routeOptions.url?.replace(/\/v1\/openapi\.json$/, "") ?? "",
      ),
  );

  app.addHook("onReady", async () => {
    runner.start();
    void runner.sweep();
  });
  app.addHook("preClose", async () => {
    await runner.stop();
  });
}
