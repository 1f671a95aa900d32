/**
 * The library entry point: create or open a session's agent with the standard preset, from a loaded
 * configuration. `bdsh run`, `bdsh chat` and `bdsh serve` all start here.
 *
 *   const { agent } = await openAgent({ store, config, workspace: process.cwd() });
 *   agent.log.onDurable((events) => …);      // every durable event
 *   agent.onDelta((d) => process.stdout.write(d.delta));
 *   await agent.followup("fix the failing test"); await agent.whenIdle();
 */
import { hostname } from "node:os";
import { instructionGate as gateFor } from "../config/instruction-review.js";
import { secretValues as mcpSecretValues, referencedVariables } from "../config/mcp-servers.js";
import { bdshHome } from "../config/paths.js";
import type { Config } from "../config/schema.js";
import { trustedRoot } from "../config/trust.js";
import { Redactor } from "../log/redact.js";
import type { Agent } from "../loop/agent.js";
import { modelSettingsFor } from "../loop/model-settings.js";
import { startSession } from "../loop/new-session.js";
import type { Plugin } from "../loop/plugin.js";
import { createAdapter } from "../model/adapter.js";
import { isProviderName, type Route, resolveApiKey, resolveRoute } from "../model/catalog.js";
import { createRecordingAdapter, createReplayAdapter, readRecording } from "../model/record.js";
import type { Effort, ModelAdapter } from "../model/types.js";
import type { SessionRow, Store } from "../store/store.js";
import { delegationOf } from "../subagents/ledger.js";
import type { ChildDriver } from "../subagents/lifecycle.js";
import { LocalChildren } from "../subagents/local-children.js";
import { EnvironmentPolicy } from "../tools/terminal/child-env.js";
import type { ApprovalPolicy } from "../tools/types.js";
import { WEB_SEARCH_KEY_VARIABLES, webSearchSecretValues } from "../tools/web/search/settings.js";
import { ttsSecretValues } from "../tts/credentials.js";
import { SetupError } from "./setup-error.js";
import { standardPlugins } from "./standard.js";
import { StandardAgent } from "./standard-agent.js";
import { type ToolsPluginOptions, toolsPlugin } from "./standard-tools.js";

export { SetupError };

export type OpenAgentOptions = {
  store: Store;
  config: Config;
  workspace: string;
  /** `$BDSH_HOME`, for plugin tools and instructions. */
  home?: string;
  /**
   * Workspace trust: whether the workspace's `.bdsh/plugins`, `.bdsh/skills` and instruction files
   * load. Default: whether `$BDSH_HOME/trusted.json` trusts the workspace.
   */
  projectTrusted?: boolean;
  /** Continue this session; otherwise a new one is created. */
  sessionId?: string;
  /** `sessionId`'s row as the caller has just read it (a server's claim): not read again. */
  sessionRow?: SessionRow;
  title?: string;
  owner?: string;
  env?: NodeJS.ProcessEnv;
  apiKeyEnv?: string;
  /** M5: the effort was chosen for this run (flag or environment), so it overrides the session's. */
  effortExplicit?: boolean;
  /** `--record FILE`: keep each raw provider exchange. */
  recordFile?: string;
  /** The `replay` provider's recording. */
  replayFile?: string;
  /** Options of the standard tools plugin. */
  toolOptions?: Omit<ToolsPluginOptions, "config">;
  plugins?: readonly Plugin[];
  /** Override the configured approval policy (a run without a terminal behaves as `never`). */
  approval?: ApprovalPolicy;
  leaseWaitMs?: number;
  /** Lease expiry (default 10 s): a dead holder's sessions are taken over after it. */
  leaseTtlMs?: number;
  /** Known secret values; default `secretRedactor(env, config, apiKeyEnv)`. */
  redactor?: Redactor;
  /**
   * S1: how children of this agent are driven. Default: in this process (`LocalChildren`, opened with these
   * same options); `bdsh serve` passes its runner, so any server may drive them.
   */
  children?: ChildDriver;
};

export type OpenedAgent = { agent: StandardAgent; session: SessionRow; adapter: ModelAdapter };

export function defaultOwner(): string {
  return `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * The variables that hold the harness's own secrets beyond the provider presets': the `--api-key-env`
 * variable and every variable an MCP server's `env` or `headers` reads. No command ever gets them, whatever
 * their names are and whatever `pass_env_keys` says.
 */
export function harnessSecretVariables(config: Config, apiKeyEnv?: string): string[] {
  return [
    ...(apiKeyEnv ? [apiKeyEnv] : []),
    ...referencedVariables(config.mcp_servers),
    ...WEB_SEARCH_KEY_VARIABLES, // T19: the search provider's key is the harness's, never a command's
  ];
}

/** The environment policy of this configuration (child-env.ts). */
export function environmentPolicy(config: Config, apiKeyEnv?: string): EnvironmentPolicy {
  return EnvironmentPolicy.of({
    strip: config.terminal.strip_env_keys,
    pass: config.terminal.pass_env_keys,
    harness: harnessSecretVariables(config, apiKeyEnv),
  });
}

/**
 * The one redactor of a process: every value the policy strips from children (the provider key, tokens,
 * passwords, the `DATABASE_URL` password, what MCP servers are given), every value an MCP server's
 * `env` or `headers` expands to and the web-search and voice providers' keys are redacted from what is
 * stored, printed or sent.
 */
export function secretRedactor(env: NodeJS.ProcessEnv, config: Config, apiKeyEnv?: string): Redactor {
  return Redactor.of([
    ...environmentPolicy(config, apiKeyEnv).secretValues(env),
    ...mcpSecretValues(config.mcp_servers, env),
    ...webSearchSecretValues(config.web_search, env), // a key written in the config file too
    ...ttsSecretValues(config.tts, env), // the same for a voice provider's key
  ]);
}

/** The adapter for the configured provider; throws SetupError (exit 2) when it cannot work at all. */
export function adapterFor(options: OpenAgentOptions): { adapter: ModelAdapter; route?: Route } {
  const { config } = options;
  const env = options.env ?? process.env;
  if (config.model.provider === "replay") {
    if (!options.replayFile)
      throw new SetupError("USAGE", "the replay provider needs a recording: --replay FILE");
    let recording: ReturnType<typeof readRecording>;
    try {
      recording = readRecording(options.replayFile);
    } catch (error) {
      // A missing or unreadable recording is a usage error (exit 2), nothing is sent.
      throw new SetupError(
        "USAGE",
        `cannot read the recording ${options.replayFile}: ${(error as Error).message}`,
      );
    }
    return { adapter: createReplayAdapter(recording) };
  }
  const provider = config.model.provider;
  if (!isProviderName(provider)) throw new SetupError("CONFIG", `unknown provider "${provider}"`);
  const route = resolveRoute(
    {
      provider,
      ...(config.model.base_url ? { baseUrl: config.model.base_url } : {}),
      ...(options.apiKeyEnv ? { apiKeyEnv: options.apiKeyEnv } : {}),
      contextWindow: config.model.context_window,
      maxOutputTokens: config.model.max_output_tokens,
      idleTimeoutMs: config.stream.idle_timeout_ms,
      ...(config.model.images === undefined ? {} : { images: config.model.images }),
    },
    env,
  );
  if (route.preset.keyRequired && resolveApiKey(route, env) === undefined) {
    throw new SetupError("AUTH", `no API key for ${provider}: set ${route.keyEnvs.join(" or ")}`);
  }
  const redactor = options.redactor ?? secretRedactor(env, config, options.apiKeyEnv);
  const adapter = options.recordFile
    ? createRecordingAdapter(route, options.recordFile, { env, redactor })
    : createAdapter(route, { env, redactor });
  return { adapter, route };
}

export async function openAgent(options: OpenAgentOptions): Promise<OpenedAgent> {
  const { config, store } = options;
  const home = options.home ?? bdshHome(options.env ?? process.env);
  // Project plugins and skills come from the trusted root's `.bdsh/`: a subdirectory's may be the model's.
  const projectRoot = trustedRoot(home, options.workspace);
  const projectTrusted = options.projectTrusted ?? projectRoot !== undefined;
  // Row 1d: a trusted project's instruction files and skills load only as a person accepted them. A caller
  // that vouches for a directory nobody trusted (`projectTrusted: true`) gets them as they are.
  const instructionGate = projectRoot ? gateFor(home, projectRoot) : undefined;
  const redactor = options.redactor ?? secretRedactor(options.env ?? process.env, config, options.apiKeyEnv);
  const { adapter, route } = adapterFor({ ...options, redactor });
  let session: SessionRow | undefined;
  if (options.sessionId) {
    session =
      options.sessionRow?.id === options.sessionId
        ? options.sessionRow
        : await store.getSession(options.sessionId);
    if (!session) throw new SetupError("NOT_FOUND", `no session ${options.sessionId} in ${store.location}`);
  } else {
    session = await startSession(store, {
      workspace: options.workspace,
      title: options.title === undefined ? undefined : redactor.text(options.title),
    });
  }
  // S1: children are driven here unless the host drives them (a server's runner).
  let local: LocalChildren | undefined;
  let children = options.children;
  if (!children) {
    const made: LocalChildren = new LocalChildren(
      store,
      async (id): Promise<Agent> => (await openAgent({ ...options, sessionId: id, children: made })).agent,
    );
    local = made;
    children = made;
  }
  const delegation = delegationOf(session);
  const workspace = (delegation && (session.metadata.workspace as string | undefined)) || options.workspace;
  const agent = new StandardAgent({
    store,
    sessionId: session.id,
    sessionRow: session,
    owner: options.owner ?? defaultOwner(),
    adapter,
    model: modelSettingsFor(
      // The replay provider has no route: the config's numbers, and the system prompt rewritten.
      route ?? {
        preset: { name: adapter.provider, systemPromptUpdate: "rewrite" },
        contextWindow: config.model.context_window,
        maxOutputTokens: config.model.max_output_tokens,
      },
      {
        id: config.model.id,
        effort: config.model.effort as Effort,
        effortExplicit: options.effortExplicit ?? false,
      },
      { provider: adapter.provider },
    ),
    plugins: standardPlugins({
      config,
      home,
      projectTrusted,
      ...(projectRoot ? { projectRoot } : {}),
      ...(instructionGate ? { instructionGate } : {}),
      tools: toolsPlugin({
        config,
        home,
        projectTrusted,
        ...(projectRoot ? { projectRoot } : {}),
        redactor,
        harnessEnvKeys: harnessSecretVariables(config, options.apiKeyEnv),
        ...options.toolOptions,
      }),
      extra: [...(options.plugins ?? []), ...(local ? [closeWithAgent(local)] : [])],
      children,
    }),
    workspace,
    // The tools' availability (required env vars) is checked against the environment the tools plugin uses.
    env: options.toolOptions?.env ?? process.env,
    sandbox: config.sandbox,
    approval: options.approval ?? config.approval,
    session: sessionInfoOf(session),
    maxParallelTools: config.tools.max_parallel,
    leaseWaitMs: options.leaseWaitMs ?? 0,
    redactor,
    ...(options.leaseTtlMs ? { leaseTtlMs: options.leaseTtlMs } : {}),
  });
  local?.adopt(agent);
  await agent.setup();
  return { agent, session, adapter };
}

/** Kind, depth and tool view of a session (S1: a delegated child is at its delegation's depth). */
function sessionInfoOf(session: SessionRow) {
  const delegation = delegationOf(session);
  if (!delegation)
    return { kind: session.kind, depth: session.parentId && session.kind === "subagent" ? 1 : 0 };
  return {
    kind: session.kind,
    depth: delegation.depth,
    // S1 fork: the parent's tool declarations, so the fork's requests extend the parent's.
    ...(delegation.mode === "fork"
      ? { toolsAs: { kind: "main" as const, depth: delegation.depth - 1 } }
      : {}),
    ...(delegation.allowedToolsets ? { allowedToolsets: delegation.allowedToolsets } : {}),
  };
}

/** The in-process children close with the agent that opened them. */
function closeWithAgent(local: LocalChildren): Plugin {
  return {
    name: "local-children",
    setup(ctx) {
      ctx.hooks.onSerial("agent/close", () => local.close(), { plugin: "local-children" });
    },
  };
}
