/**
 * `bdsh serve [--port N] [--host H]` (INTERFACE.md): a thin standalone Fastify host around
 * `bdshPlugin`. Several `serve` processes may share one `DATABASE_URL`.
 *
 * Invariants:
 * - Every `/v1` request needs a bearer token, loopback included (another local user or a web page could otherwise drive it): `BDSH_SERVER_TOKEN`
 *   when set (never passed to a model-run command), otherwise a random token made here, held in this
 *   process's memory only and printed once on stderr. It is never written to a file, the store or the
 *   environment of anything this process starts, so no sandboxed command can read it.
 * - Bound to anything but loopback, it refuses to start without `BDSH_SERVER_TOKEN` (exit 2): a token
 *   that only a terminal's scrollback knows is no way to run a shared server.
 * - The provider is checked before listening, so a bad configuration exits 2 with nothing served.
 * - SIGTERM or SIGINT: stop accepting, let the runner finish or cancel in-flight turns and release its
 *   leases, close the store, exit 0 — within `server.shutdown_grace_ms` (plus a short margin to close);
 *   a turn that would not stop is left to another server, as after a crash.
 *
 * stderr: `bdsh: serving on http://HOST:PORT (owner OWNER)` once listening, then one line saying which
 * token to send: the made one in full (`Authorization: Bearer <token>`), or that `BDSH_SERVER_TOKEN` is it.
 */
import type { Command } from "commander";
import { adapterFor, defaultOwner, secretRedactor } from "../../presets/open-agent.js";
import { generateServerToken } from "../../server/auth.js";
import { serverLogging } from "../../server/logging.js";
import { startOtlpTracing } from "../../telemetry/otlp-export.js";
import {
  cliEnvironment,
  type GlobalOptions,
  openEnvironmentStore,
  printStartupWarnings,
} from "../environment.js";
import { EXIT_OK, usageError } from "../errors.js";
import type { Output } from "../output.js";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);
/** Past the grace, what closing the HTTP server and the store may take before the process goes anyway. */
const CLOSE_MARGIN_MS = 500;

/** Exits with `code` on the loop's next turn, once the CLI has returned (stderr to a pipe is synchronous). */
function exitSoon(code: number): void {
  setImmediate(() => process.exit(code)).unref();
}

export function registerServe(program: Command, output: Output, setExitCode: (code: number) => void): void {
  program
    .command("serve")
    .description("HTTP API and event stream; several servers may share one DATABASE_URL")
    .option("--port <n>", "port to listen on (0: any free port)", "8080")
    .option("--host <h>", "address to bind", "127.0.0.1")
    .action(async (options: { port: string; host: string }, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      const port = Number(options.port);
      if (!Number.isInteger(port) || port < 0 || port > 65_535) throw usageError(`--port must be 0-65535`);
      const configured = environment.env.BDSH_SERVER_TOKEN || undefined;
      if (!configured && !LOOPBACK.has(options.host))
        throw usageError(`BDSH_SERVER_TOKEN is required to bind ${options.host} (not loopback)`);
      const config = environment.loaded.config;
      printStartupWarnings(environment, output); // running without an OS sandbox is said on every start
      const store = await openEnvironmentStore(environment);
      try {
        adapterFor({ store, config, workspace: environment.cwd, env: environment.env });
      } catch (error) {
        await store.close();
        throw error; // a SetupError exits 2 (cli/errors.ts)
      }
      const owner = defaultOwner();
      // Traces over OTLP only when an endpoint is configured (the SDK is not even loaded otherwise).
      const tracing = await startOtlpTracing(environment.env);
      const token = configured ?? generateServerToken();
      // The HTTP stack (Fastify, the schemas) loads only for `serve`: every other command starts without it.
      const [{ default: Fastify }, { bdshPlugin, bdshServerOptions }] = await Promise.all([
        import("fastify"),
        import("../../server/plugin.js"),
      ]);
      const app = Fastify({
        ...bdshServerOptions(),
        forceCloseConnections: true,
        ...serverLogging({
          level: config.server.log_level,
          redactor: secretRedactor(environment.env, config),
        }),
      });
      await app.register(bdshPlugin, {
        store,
        config,
        workspace: environment.cwd,
        home: environment.home,
        env: environment.env,
        owner,
        token,
      });
      // server.backlog: Node's default of 511 drops connection attempts when a thousand clients arrive at once.
      const address = await app.listen({ port, host: options.host, backlog: config.server.backlog });
      output.err(`bdsh: serving on ${address} (owner ${owner})`);
      output.err(
        configured
          ? "bdsh: /v1 requests need the header: Authorization: Bearer $BDSH_SERVER_TOKEN"
          : `bdsh: /v1 requests need the header (this process only; set BDSH_SERVER_TOKEN to choose one): Authorization: Bearer ${token}`,
      );
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once("SIGTERM", stop);
        process.once("SIGINT", stop);
      });
      // The runner stops its turns within the grace; should closing the server or the store still hang
      // (a connection that will not end), the process goes anyway when the grace is up: what it leaves
      // open is what a crash leaves, and another server repairs it.
      const graceMs = config.server.shutdown_grace_ms;
      const stopped = await Promise.race([
        (async () => {
          await app.close();
          await store.close();
          await tracing?.shutdown().catch(() => undefined);
          return true;
        })(),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), graceMs + CLOSE_MARGIN_MS).unref()),
      ]);
      if (!stopped)
        output.err("bdsh: the grace ran out before the server closed; other servers repair what it left");
      setExitCode(EXIT_OK);
      // Work left behind (a tool that ignored its cancel, a stalled stream) must not keep the process alive.
      exitSoon(EXIT_OK);
    });
}
