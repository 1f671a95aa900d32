/**
 * `bdshPlugin`: the HTTP API as a Fastify plugin a host application registers on its own server.
 * `bdsh serve` (src/cli/commands/serve.ts) is a thin standalone host around it.
 *
 *   const app = Fastify({ ...bdshServerOptions() });
 *   await app.register(bdshPlugin, { store, config, workspace, token: process.env.BDSH_SERVER_TOKEN });
 *   await app.listen({ port: 8080 });
 *
 * Invariants:
 * - Encapsulated: the error handler, the hooks, the body parser and the routes apply only inside the plugin.
 * - Every `/v1` route needs `Authorization: Bearer <token>`, on every binding, loopback included (any
 *   local process could call it otherwise; ./auth.ts): the token is a required option, so the host
 *   decides it (`bdsh serve`:
 *   `BDSH_SERVER_TOKEN`, else one made at start and printed once). It is checked in `onRequest`, before the
 *   body is read (finding 7). `/healthz` and `/readyz` never need it.
 * - On a loopback connection the `Host` header must name loopback (DNS rebinding), for every route.
 * - Only `application/json` bodies are parsed; any other content type is a 415.
 * - Every refusal has the shape `{error: {code, message}}` (./api-error.ts); `bdshServerOptions()` gives
 *   the host the two server options that route the router's and Node's own refusals there too.
 * - `/` and `/assets/*` serve the web dashboard's static files without the token (they hold no data; the
 *   page asks for the token): ./dashboard.ts. The page trades the token for an HttpOnly session cookie
 *   (`POST /v1/sign-in`, ./dashboard-session.ts), accepted on every `/v1` route like the bearer header.
 * - A state-changing request whose `Origin` names another origin is 403 `FORBIDDEN_ORIGIN`, and one
 *   authenticated by the cookie must carry this origin's `Origin` (CSRF).
 * - The plugin starts a SessionRunner on `onReady` and stops it on `onClose` (graceful shutdown: finish or
 *   cancel in-flight turns, release leases).
 */
import type { FastifyInstance, FastifyServerOptions } from "fastify";
import { loadApprovalKey } from "../config/approval-key.js";
import { bdshHome } from "../config/paths.js";
import type { Config } from "../config/schema.js";
import type { Plugin } from "../loop/plugin.js";
import { McpPool } from "../mcp/pool.js";
import { priceFromConfig } from "../model/pricing.js";
import { defaultOwner, openAgent, secretRedactor } from "../presets/open-agent.js";
import type { StandardAgent } from "../presets/standard-agent.js";
import type { SessionRow, Store } from "../store/store.js";
import type { ChildDriver } from "../subagents/lifecycle.js";
import { AnswerSigner } from "./answer-proof.js";
import { ApiError, clientErrorHandler, frameworkErrors } from "./api-error.js";
import { bearerOf, tokenChecker } from "./auth.js";
import { defaultDashboardDir, registerDashboard } from "./dashboard.js";
import {
  cookieValue,
  DashboardSessions,
  isStateChanging,
  SESSION_COOKIE,
  sameOrigin,
} from "./dashboard-session.js";
import { registerEventStream } from "./event-stream.js";
import { registerFileRoutes } from "./file-routes.js";
import { registerHistoryRoutes } from "./history-routes.js";
import { registerInteractionRoutes } from "./interaction-routes.js";
import { httpInteractionsPlugin } from "./interactions.js";
import { lostJobsPlugin } from "./lost-jobs.js";
import { metricsPlugin, ServerMetrics, timedStore } from "./metrics.js";
import { RouteTable } from "./openapi.js";
import {
  answerUnknownRoutes,
  FORBIDDEN_ORIGIN_MESSAGE,
  guardRequests,
  registerMetricsRoute,
  registerOpenApiRoute,
  registerProbeRoutes,
} from "./request-guards.js";
import { registerSessionRoutes } from "./session-routes.js";
import { SessionRunner } from "./session-runner.js";
import { registerSignInRoutes } from "./sign-in-routes.js";
import { registerSpeechRoutes } from "./speech-routes.js";
import { strictValidator } from "./strict-validation.js";
import { registerSubagentRoutes } from "./subagent-routes.js";

export type BdshPluginOptions = {
  store: Store;
  config: Config;
  /** The workspace new sessions run in. */
  workspace: string;
  home?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * The bearer token every `/v1` request must carry (not empty). It must be a secret no model-run process
   * can read: `BDSH_SERVER_TOKEN` (stripped from children) or `generateServerToken()` kept in memory.
   */
  token: string;
  /**
   * The approval key that signs answers queued over HTTP and proves them to the waiting agent (default:
   * `BDSH_APPROVAL_KEY`, else `$BDSH_HOME/approval.key`, config/approval-key.ts). Servers sharing one
   * PostgreSQL must share it.
   */
  approvalKey?: Buffer;
  /** More `Host` names accepted on loopback connections (a reverse proxy's name); loopback names always are. */
  allowedHosts?: readonly string[];
  /** This server's lease owner id (default: host:pid:random). */
  owner?: string;
  /** Opens a session's agent; default: the standard preset with store-backed approvals and questions. */
  open?: (sessionId: string, owner: string, row?: SessionRow) => Promise<StandardAgent>;
  /** Plugins appended to the standard preset of every agent this server opens. */
  plugins?: readonly Plugin[];
  onError?: (error: unknown, sessionId?: string) => void;
  /**
   * The built web dashboard served at `/`: a directory holding `index.html` and `assets/`
   * (default: the one `npm run build` makes, ./dashboard.ts), or `false` for none.
   */
  dashboard?: string | false;
};

/**
 * Server options for the host's `Fastify({...})`: the router's and Node's refusals in the API's shape.
 * Node's own refusal of a request without `Host` is an empty 400; it is turned off so that the plugin's
 * hook refuses it in the API's shape instead.
 */
export function bdshServerOptions(): Pick<FastifyServerOptions, "frameworkErrors" | "clientErrorHandler"> & {
  http: { requireHostHeader: false };
} {
  return { frameworkErrors, clientErrorHandler, http: { requireHostHeader: false } };
}

export async function bdshPlugin(app: FastifyInstance, options: BdshPluginOptions): Promise<void> {
  const { config } = options;
  // One registry per server; the store as this server uses it is timed.
  const metrics = new ServerMetrics({
    stats: () => runner.stats(),
    readyQueue: () => options.store.readyQueue(),
  });
  const store = timedStore(options.store, metrics);
  const price = priceFromConfig(config.model); // M20
  if (typeof options.token !== "string" || options.token === "")
    throw new Error("bdshPlugin needs a token (BDSH_SERVER_TOKEN, or generateServerToken())");
  const tokenMatches = tokenChecker(options.token);
  const sessions = new DashboardSessions(options.token);
  const env = options.env ?? process.env;
  // Answers are proven with a key outside the store (./answer-proof.ts): a command may reach the store.
  const signer = new AnswerSigner(
    options.approvalKey ?? loadApprovalKey({ env, home: options.home ?? bdshHome(env) }),
  );
  // One client per MCP server for the whole process, shared by its sessions, closed on shutdown.
  const mcp = Object.keys(config.mcp_servers).length
    ? new McpPool(config.mcp_servers, {
        env,
        cwd: options.workspace,
        onReport: (server, message) => app.log.warn({ mcpServer: server }, message), // once per failure
      })
    : undefined;
  app.setValidatorCompiler(strictValidator);
  const settings = config.server;
  const owner = options.owner ?? defaultOwner();
  const onError =
    options.onError ??
    ((error: unknown, id?: string) => app.log.error({ err: error, sessionId: id }, "session"));
  // S1, S3: children and parents are woken through the runner (the claim pass takes what has input), and a
  // cancel travels as a request through the store to whichever server drives the child.
  const children: ChildDriver = {
    findsOrphans: true, // the runner's claim passes take orphaned turns and pending input (R1, S3)
    wake: (sessionId) => {
      void runner.wake(sessionId).catch((error: unknown) => onError(error, sessionId));
    },
    cancel: async (sessionId) => {
      await store.requestCancel(sessionId);
      await runner.wake(sessionId);
    },
  };
  // The one redactor of the process (its env and config do not change): built here, not per agent opened.
  const redactor = secretRedactor(env, config);
  const open =
    options.open ??
    (async (sessionId: string, _owner: string, row?: SessionRow) => {
      const { agent } = await openAgent({
        store,
        config,
        redactor,
        workspace: options.workspace,
        ...(row ? { sessionRow: row } : {}),
        ...(options.home ? { home: options.home } : {}),
        ...(options.env ? { env: options.env } : {}),
        ...(mcp ? { toolOptions: { home: options.home ?? bdshHome(env), mcp } } : {}),
        sessionId,
        owner,
        leaseTtlMs: settings.lease_ttl_ms,
        children, // S1: any server's runner may drive a child, and wake its parent
        plugins: [
          httpInteractionsPlugin({ questionTimeoutMs: settings.question_timeout_ms, signer }),
          lostJobsPlugin({ owner, leaseTtlMs: settings.lease_ttl_ms }),
          metricsPlugin(metrics, price),
          ...(options.plugins ?? []),
        ],
      });
      return agent;
    });
  const runner: SessionRunner<StandardAgent> = new SessionRunner<StandardAgent>({
    store,
    owner,
    open: (id, row) => open(id, owner, row),
    sweepIntervalMs: settings.sweep_interval_ms,
    maxSessions: settings.max_sessions_per_server,
    maxRunning: Math.min(settings.max_running_per_server, settings.max_sessions_per_server),
    leaseTtlMs: settings.lease_ttl_ms,
    shutdownGraceMs: settings.shutdown_grace_ms,
    onError,
    onTakeover: (count) => metrics.takeovers.inc(count),
    evictable: (agent) => !agent.hasRunningJobs(),
  });

  const allowedHosts = options.allowedHosts ?? [];
  guardRequests(app, allowedHosts);
  const routes = new RouteTable(app, {
    bodyLimit: settings.body_limit_bytes,
    authenticate: async (request, reply) => {
      if (tokenMatches(bearerOf(request.headers.authorization))) return;
      if (sessions.valid(cookieValue(request.headers.cookie, SESSION_COOKIE))) {
        // The browser attaches the cookie by itself: a state change must say it came from this origin.
        if (isStateChanging(request.method) && !sameOrigin(request.headers))
          throw new ApiError(403, "FORBIDDEN_ORIGIN", FORBIDDEN_ORIGIN_MESSAGE);
        return;
      }
      reply.header("www-authenticate", 'Bearer realm="bdsh"');
      throw new ApiError(
        401,
        "UNAUTHORIZED",
        "missing or wrong bearer token (Authorization: Bearer <token>)",
      );
    },
  });

  answerUnknownRoutes(app, routes);
  registerProbeRoutes(routes, { owner, runner, store });
  registerSessionRoutes(routes, {
    store,
    runner,
    workspace: options.workspace,
    price,
  });
  registerSignInRoutes(routes, { sessions, tokenMatches, cookiePath: `${app.prefix.replace(/\/+$/, "")}/` });
  registerHistoryRoutes(routes, { store });
  registerEventStream(routes, {
    store,
    runner,
    keepAliveMs: 15_000,
    onClients: (delta) => metrics.sseClients.inc(delta),
  });
  registerMetricsRoute(routes, metrics, settings.metrics_public);
  // T22: files a session presented, inside its workspace only, never the harness's home
  registerFileRoutes(routes, { store, home: options.home ?? bdshHome(env) });
  registerInteractionRoutes(routes, { store, runner, signer });
  registerSubagentRoutes(routes, { store, children, config }); // the lifecycle API by handle
  registerSpeechRoutes(app, {
    store,
    runner,
    config,
    env: options.env ?? process.env,
    tokenMatches,
    sessions,
    allowedHosts,
  });
  registerOpenApiRoute(routes);

  // The dashboard's static page at `/`, talking to the routes above only.
  if (options.dashboard !== false) registerDashboard(app, options.dashboard ?? defaultDashboardDir());

  app.addHook("onReady", async () => {
    runner.start();
    void runner.sweep();
  });
  app.addHook("preClose", async () => {
    await runner.stop();
    await mcp?.close();
  });
}
