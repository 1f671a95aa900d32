/**
 * `bdsh doctor [--online]`: checks configuration, credentials (present or not — a value is never printed),
 * the store, the tool binaries and the sandbox; `--online` adds one cheap authenticated request. Exit 0 when nothing failed (warnings allowed), 1 when a check failed,
 * 2 for a configuration error (raised before any check runs).
 */
import { spawnSync } from "node:child_process";
import type { Command } from "commander";
import { ACCEPT_COMMAND } from "../../config/instruction-files.js";
import { pendingInstructions } from "../../config/instruction-review.js";
import type { Config } from "../../config/schema.js";
import { projectFiles, trustedRoot } from "../../config/trust.js";
import { assertNever } from "../../log/events.js";
import { mcpDoctorChecks } from "../../mcp/report.js";
import { isProviderName, resolveRoute } from "../../model/catalog.js";
import { displayBaseUrl } from "../../model/errors.js";
import { checkKey } from "../../model/key-check.js";
import { RG_PATH_ENV, ripgrepBinary } from "../../tools/files/ripgrep.js";
import { bubblewrapAvailable, networkIsolationAvailable } from "../../tools/terminal/bubblewrap.js";
import { terminalRegistry } from "../../tools/terminal/setup.js";
import { webSearchSettingsFrom } from "../../tools/web/search/settings.js";
import { BUBBLEWRAP_INSTALL, cliEnvironment, type GlobalOptions, withStore } from "../environment.js";
import { EXIT_FAILED, EXIT_OK } from "../errors.js";
import { humanOutput, type Output } from "../output.js";
import { sanitize } from "../render/terminal-text.js";

type Status = "ok" | "warn" | "fail";
type Check = { status: Status; name: string; detail: string };

/** Binaries the builtin tools use; missing ones degrade a tool, they do not stop the harness. */
const TOOL_BINARIES = [
  { name: "bash", why: "bash tool" },
  { name: "git", why: "workspace changes" },
];

export function registerDoctor(program: Command, output: Output, setExitCode: (code: number) => void): void {
  registerBackends(program, output, setExitCode); // `bdsh backends list`, next to the doctor
  program
    .command("doctor")
    .description("check configuration, credentials, store, sandbox and tool binaries")
    .option("--json", "print the checks as JSON")
    .option("--online", "also make one cheap authenticated request (the model list) to check the key")
    .action(async (options: { json?: boolean; online?: boolean }, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      const { config, files } = environment.loaded;
      const checks: Check[] = [];
      checks.push({
        status: "ok",
        name: "config",
        detail: `${files.length ? files.join(", ") : "defaults only"}; provider ${config.model.provider}, model ${config.model.id}, effort ${config.model.effort}, sandbox ${config.sandbox}, approval ${config.approval}`,
      });

      // Say whether the project's own files load, and why not.
      const { project } = environment.loaded;
      const carried = projectFiles(project.dir);
      const root = trustedRoot(environment.home, project.dir);
      checks.push(
        project.trusted
          ? {
              status: "ok",
              name: "trust",
              detail: `${project.dir} is trusted${root && root !== project.dir ? ` (via ${root})` : ""}; project files load${carried.length ? `: ${carried.join(", ")}` : ""}`,
            }
          : carried.length
            ? {
                status: "warn",
                name: "trust",
                detail: `${project.dir} is not trusted, so its ${carried.join(", ")} did not load (project plugins never load untrusted); run \`bdsh trust\` to trust it`,
              }
            : {
                status: "ok",
                name: "trust",
                detail: `${project.dir} is not trusted (it carries no project files)`,
              },
      );
      // Row 1d: instruction files and skills no person accepted are left out of every run until reviewed.
      if (project.trusted) {
        const { pending } = pendingInstructions(environment.home, project.root, environment.cwd);
        if (pending.length)
          checks.push({
            status: "warn",
            name: "instructions",
            detail: `${pending.length} instruction file(s) or skill(s) are not loaded until you accept them: ${pending.map((f) => f.name).join(", ")}; run \`${ACCEPT_COMMAND}\` to review them`,
          });
      }
      for (const warning of environment.loaded.warnings.filter((w) => w.includes("cannot loosen")))
        checks.push({ status: "warn", name: "config", detail: warning });

      const variables = credentialVariables(config.model.provider);
      const present = variables.filter((name) => !!environment.env[name]);
      checks.push(
        variables.length === 0
          ? { status: "ok", name: "credentials", detail: `provider ${config.model.provider} needs no key` }
          : present.length > 0
            ? { status: "ok", name: "credentials", detail: `${present[0]} is set` }
            : { status: "warn", name: "credentials", detail: `none of ${variables.join(", ")} is set` },
      );

      checks.push(webSearchCheck(config.web_search, environment.env));

      try {
        await withStore(environment, async (store) => {
          const sessions = await store.listSessions({ limit: 1000, includeArchived: true });
          checks.push({
            status: "ok",
            name: "store",
            detail: `${store.kind} at ${store.location} (${sessions.length}${sessions.length === 1000 ? "+" : ""} sessions)`,
          });
        });
      } catch (error) {
        checks.push({ status: "fail", name: "store", detail: `unreachable: ${(error as Error).message}` });
      }

      for (const binary of TOOL_BINARIES) {
        const path = which(binary.name);
        checks.push(
          path
            ? { status: "ok", name: binary.name, detail: path }
            : { status: "warn", name: binary.name, detail: `not found (${binary.why})` },
        );
      }
      checks.push(ripgrepCheck());
      const bwrap = which("bwrap");
      const works = bwrap !== undefined && bubblewrapAvailable();
      checks.push(
        works
          ? {
              status: "ok",
              name: "sandbox",
              detail: `file policy ${config.sandbox}; commands run under bubblewrap (${bwrap}); network ${networkDetail(config.sandbox_network, config.sandbox_proxy_allow)}`,
            }
          : {
              status: config.sandbox_required ? "fail" : "warn",
              name: "sandbox",
              detail: `${bwrap ? `bwrap at ${bwrap} cannot create a sandbox here (user namespaces disabled?)` : "bubblewrap (bwrap) not found"}: commands ${config.sandbox_required ? "are refused (sandbox_required)" : "run WITHOUT an OS sandbox"}; ${BUBBLEWRAP_INSTALL}`,
            },
      );

      // Each MCP server, started and stopped (a value of its env or headers is never printed).
      checks.push(
        ...(await mcpDoctorChecks(config.mcp_servers, { env: environment.env, cwd: environment.cwd })),
      );

      checks.push(...(await terminalChecks(environment)));

      if (options.online)
        checks.push(await onlineCheck(config.model.provider, config.model.base_url, environment.env));

      if (options.json) output.out(JSON.stringify({ checks }));
      else
        for (const check of checks)
          output.out(sanitize(`${check.status.padEnd(4)}  ${check.name.padEnd(11)}  ${check.detail}`));
      setExitCode(checks.some((c) => c.status === "fail") ? EXIT_FAILED : EXIT_OK);
    });
}

/** T19: which search provider `web_search` uses and whether its key is set (never the key). */
function webSearchCheck(config: Config["web_search"], env: NodeJS.ProcessEnv): Check {
  const settings = webSearchSettingsFrom(config, env);
  if (!settings.available)
    return {
      status: settings.name ? "warn" : "ok",
      name: "web_search",
      detail: `${settings.reason}; the web_search tool is not offered`,
    };
  const key = settings.key ? `${settings.key.source} is set` : "no key (none needed)";
  return {
    status: "ok",
    name: "web_search",
    detail: `${settings.spec.label} at ${displayBaseUrl(settings.baseUrl)}; ${key}`,
  };
}

/**
 * The selected terminal backend's own checks (setup hints when it is not usable), backend plugins
 * that failed to load, and one line naming every backend with its probe ("not available in this build" for
 * the reserved names this build does not implement). No check touches the network.
 */
async function terminalChecks(environment: ReturnType<typeof cliEnvironment>): Promise<Check[]> {
  const { config } = environment.loaded;
  const { backends, report } = await terminalRegistry({
    config,
    home: environment.home,
    workspace: environment.cwd,
    env: environment.env,
  });
  const checks: Check[] = [];
  const selected = config.terminal.backend;
  if (!backends.get(selected)) {
    checks.push({
      status: "fail",
      name: "backend",
      detail: `terminal.backend "${selected}" is not a registered backend; known: ${backends.names().join(", ")}`,
    });
  } else {
    const own = backends.doctorChecks(selected);
    checks.push(
      ...(own.length > 0
        ? own
        : [
            {
              status: "ok" as const,
              name: "backend",
              detail: `${selected}: ${backends.list().find((b) => b.name === selected)?.probe.detail}`,
            },
          ]),
    );
  }
  for (const failure of report.failed)
    checks.push({
      status: "warn",
      name: "backend plugin",
      detail: `${failure.name} (${failure.path}): ${failure.error}`,
    });
  checks.push({
    status: "ok",
    name: "backends",
    detail: backends
      .list()
      .map((b) => `${b.name}${b.name === selected ? " (selected)" : ""}: ${b.probe.detail}`)
      .join("; "),
  });
  return checks;
}

/** `bdsh backends list`: every terminal backend, whether it is available, its probe, remote/container. */
export function registerBackends(
  program: Command,
  output: Output,
  setExitCode: (code: number) => void,
): void {
  const backends = program.command("backends").description("terminal backends (local, ssh, docker, plugins)");
  backends
    .command("list")
    .description("list the terminal backends: available, probe status, remote or container")
    .option("--json", "print them as JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      const { config } = environment.loaded;
      const { backends: registry, report } = await terminalRegistry({
        config,
        home: environment.home,
        workspace: environment.cwd,
        env: environment.env,
      });
      const rows = registry.list().map((b) => ({
        name: b.name,
        displayName: b.displayName,
        selected: b.name === config.terminal.backend,
        builtin: b.builtin,
        available: b.available,
        probe: b.probe,
        remote: b.isRemote,
        container: b.isContainer,
        description: b.description,
        ...(b.available ? {} : { setup: b.setup }),
      }));
      if (options.json) output.out(JSON.stringify({ backends: rows, failedPlugins: report.failed }));
      else {
        const human = humanOutput(output); // plugin names, probes and errors are not ours to trust
        for (const row of rows) {
          const where = [row.remote ? "remote" : "local", ...(row.container ? ["container"] : [])].join(", ");
          human.out(
            `${row.selected ? "*" : " "} ${row.name.padEnd(15)} ${(row.available ? "available" : "unavailable").padEnd(11)}  ${where.padEnd(17)}  ${row.probe.detail}`,
          );
        }
        for (const failure of report.failed) human.out(`! plugin ${failure.name}: ${failure.error}`);
      }
      setExitCode(EXIT_OK);
    });
}

/** M25: the variables a provider's key may come from, in the order the model layer tries them. */
function credentialVariables(provider: string): string[] {
  if (!isProviderName(provider)) return [];
  const route = resolveRoute({ provider }, {});
  return route.preset.keyRequired ? [...route.keyEnvs] : [];
}

/**
 * `--online`: one GET of the provider's model list with the configured key. `ok`, `AUTH`
 * (the key was refused) or unreachable, each naming the provider and the URL (credentials redacted); the
 * key is never printed. A missing key or a refused one fails the check.
 */
async function onlineCheck(
  provider: string,
  baseUrl: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<Check> {
  const name = "online";
  if (!isProviderName(provider)) return { status: "fail", name, detail: `unknown provider "${provider}"` };
  const route = resolveRoute({ provider, ...(baseUrl ? { baseUrl } : {}) }, env);
  const result = await checkKey(route, { env });
  const keyFrom = route.keyEnvs.find((variable) => !!env[variable]?.trim());
  const key = keyFrom ? `the key in ${keyFrom}` : "no key";
  switch (result.outcome) {
    case "no-key":
      return {
        status: "fail",
        name,
        detail: `AUTH: no API key for ${provider}: set ${result.keyEnvs.join(" or ")}`,
      };
    case "ok":
      return {
        status: "ok",
        name,
        detail: `provider ${provider} accepted ${key}: GET ${result.url} answered ${result.status}`,
      };
    case "auth":
      return {
        status: "fail",
        name,
        detail: `AUTH: provider ${provider} refused ${key} (GET ${result.url} answered ${result.message}); check the key or set the right variable (${route.keyEnvs.join(" or ")})`,
      };
    case "http":
      return {
        status: "warn",
        name,
        detail: `provider ${provider}: GET ${result.url} answered ${result.message}, so the key could not be checked (is the base URL right?)`,
      };
    case "unreachable":
      return {
        status: "fail",
        name,
        detail: `unreachable: provider ${provider} at ${displayBaseUrl(route.baseUrl)}: ${result.message}; check the base URL (--base-url, BDSH_BASE_URL, ${route.preset.baseUrlEnv} or model.base_url) and the network`,
      };
    default:
      return assertNever(result, "key check");
  }
}

/** Which ripgrep `glob` and `grep` run (packaged, `BDSH_RG_PATH`, or a system one). */
function ripgrepCheck(): Check {
  const rg = ripgrepBinary();
  if (!rg.ok) return { status: "warn", name: "rg", detail: `${rg.error}; glob and grep are unavailable` };
  const where = rg.source === "system" ? (which("rg") ?? "rg") : rg.path;
  const detail = `${where} (${rg.version}; ${RG_SOURCE_LABEL[rg.source]})`;
  return rg.note
    ? { status: "warn", name: "rg", detail: `${detail}: ${rg.note}` }
    : { status: "ok", name: "rg", detail };
}

const RG_SOURCE_LABEL = {
  packaged: "packaged @vscode/ripgrep",
  override: `${RG_PATH_ENV} override`,
  system: "system rg on PATH",
} as const;

function which(binary: string): string | undefined {
  const result = spawnSync("sh", ["-c", `command -v ${binary}`], { encoding: "utf8" });
  const path = (result.stdout ?? "").trim(); // null when `sh` itself is not on PATH
  return result.status === 0 && path ? path : undefined;
}

/** What sandboxed commands may reach, as the sandbox check reports it. */
function networkDetail(mode: "off" | "proxy" | "on", allow: readonly string[]): string {
  if (mode !== "on" && !networkIsolationAvailable())
    return `${mode} wanted, but bwrap cannot make a network namespace here, so commands share the network`;
  if (mode === "proxy") return `proxy (allowed: ${allow.length ? allow.join(", ") : "none"})`;
  return mode === "off" ? "off (no network for commands)" : "on (shared with this machine)";
}
