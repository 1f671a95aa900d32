/**
 * `bdsh serve [--port N] [--host H]` (INTERFACE.md, issue 8): a thin standalone Fastify host around
 * `bdshPlugin`. Several `serve` processes may share one `DATABASE_URL`.
 *
 * Invariants:
 * - Bound to anything but loopback, it refuses to start without `BDSH_SERVER_TOKEN` (exit 2).
 * - The provider is checked before listening, so a bad configuration exits 2 with nothing served.
 * - SIGTERM or SIGINT: stop accepting, let the runner finish or cancel in-flight turns and release its
 *   leases, close the store, exit 0.
 *
 * stderr: `bdsh: serving on http://HOST:PORT (owner OWNER)` once listening.
 */
import type { Command } from "commander";
import Fastify from "fastify";
import { adapterFor, defaultOwner, SetupError } from "../../presets/open-agent.js";
import { bdshPlugin } from "../../server/plugin.js";
import { cliEnvironment, type GlobalOptions, openEnvironmentStore } from "../environment.js";
import { CliError, EXIT_OK, EXIT_USAGE, usageError } from "../errors.js";
import type { Output } from "../output.js";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

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
      const token = environment.env.BDSH_SERVER_TOKEN || undefined;
      if (!token && !LOOPBACK.has(options.host))
        throw usageError(`BDSH_SERVER_TOKEN is required to bind ${options.host} (not loopback)`);
      const config = environment.loaded.config;
      const store = await openEnvironmentStore(environment);
      try {
        adapterFor({ store, config, workspace: environment.cwd, env: environment.env });
      } catch (error) {
        await store.close();
        if (error instanceof SetupError) throw new CliError(error.code, error.message, EXIT_USAGE);
        throw error;
      }
      const owner = defaultOwner();
      const app = Fastify({
        forceCloseConnections: true,
        logger: { level: environment.env.BDSH_LOG_LEVEL ?? "warn" },
      });
      await app.register(bdshPlugin, {
        store,
        config,
        workspace: environment.cwd,
        home: environment.home,
        env: environment.env,
        owner,
        ...(token ? { token } : {}),
      });
      const address = await app.listen({ port, host: options.host });
      output.err(`bdsh: serving on ${address} (owner ${owner})`);
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once("SIGTERM", stop);
        process.once("SIGINT", stop);
      });
      await app.close();
      await store.close();
      setExitCode(EXIT_OK);
    });
}
