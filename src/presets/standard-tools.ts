/**
 * The tools plugin of the standard preset: registers the builtin tools, `$BDSH_HOME`'s plugin tools and the
 * MCP servers' tools in the agent's registry (loop/agent-tools.ts, which decides the offer), and installs
 * the tool policies and the services the tools use (T2, T9, T22).
 *
 * Invariants:
 * - Everything stateful is per agent: file observations (C18) and the repeat chain (G1), both folded from
 *   the log so they are the same on whichever server opens the session; session approvals, jobs. Nothing
 *   lives in process globals.
 * - The tools offered are decided by the agent once every plugin is set up, and stay the same for the
 *   session's requests (SP8, M23).
 * - A finished background job's notice is steered into the agent: the next step of a running turn, or a
 *   new turn when idle (T9). A job killed or already collected sends none.
 * - Broken plugin tools are reported and skipped, never fatal.
 */
import { join } from "node:path";
import type { Config } from "../config/schema.js";
import { trustedDirectories } from "../config/trust.js";
import { saveImage } from "../context/attachments.js";
import { commandSandboxFact } from "../context/runtime-context.js";
import type { ImageMediaType } from "../log/messages.js";
import { Redactor } from "../log/redact.js";
import type { Plugin } from "../loop/plugin.js";
import { CONTEXT_ORDER } from "../loop/prompt.js";
import type { McpPool } from "../mcp/pool.js";
import { attachMcpFromConfig } from "../mcp/tools.js";
import { imagesFor } from "../model/catalog.js";
import type { Approvals } from "../tools/approvals.js";
import { FileObservations } from "../tools/files/file-observations.js";
import type {} from "../tools/files/masked-paths.js";
import { readImageTool } from "../tools/files/read-image.js";
import type { ExactCommandApprovals } from "../tools/guards/command-guard.js";
import type { QuestionAnswerer } from "../tools/interaction/ask-user-tool.js";
import { recordedInteractions } from "../tools/interaction/recorded.js";
import { loadPlugins, type PluginReport } from "../tools/plugins.js";
import { redactingBlobStore } from "../tools/spill/blob-store.js";
import { quotaBlobStoreFor } from "../tools/spill/spill-quota.js";
import { installToolPolicies, standardTools } from "../tools/standard.js";
import { setupTerminal, terminalRegistry } from "../tools/terminal/setup.js";
import { MemoryTodoList } from "../tools/todo/todo-tool.js";
import { searchClient } from "../tools/web/search/search-client.js";
import { webSearchSettingsFrom } from "../tools/web/search/settings.js";

export type ToolsPluginOptions = {
  config: Config;
  /** `$BDSH_HOME`: plugin tools load from `<home>/plugins`. */
  home: string;
  /** Workspace trust: `<workspace>/.bdsh/plugins` loads only when true. Default false. */
  projectTrusted?: boolean;
  /** The directory whose `.bdsh/plugins` is the project's (the trusted root); default the workspace. */
  projectRoot?: string;
  env?: NodeJS.ProcessEnv;
  /** The approval channel (a terminal prompt, the HTTP API); none means policy `ask` fails closed (T16). */
  approvals?: Approvals;
  questionAnswerer?: QuestionAnswerer;
  /** "Allow permanently": writes a pattern key to `command_allowlist`. */
  persistAllowlist?: (key: string) => void | Promise<void>;
  /** "Allow this exact command in this project from now on" (the CLI's `$BDSH_HOME/approvals.json`). */
  exactCommands?: ExactCommandApprovals;
  /** Report plugin tools that failed to load (stderr in the CLI). */
  onPluginFailure?: (failure: PluginReport["failed"][number]) => void;
  /** Redacts spilled blobs (openAgent builds it). */
  redactor?: Redactor;
  /** Harness secrets beyond the built-in ones (the `--api-key-env` variable): never passed to a child. */
  harnessEnvKeys?: readonly string[];
  /** The process's MCP servers (`bdsh serve`); without it the agent starts and closes its own. */
  mcp?: McpPool;
};

export function toolsPlugin(options: ToolsPluginOptions): Plugin {
  const { config } = options;
  return {
    name: "tools",
    needs: ["blobs", "processes"], // T7 spill; T9 job receipts
    async setup(ctx) {
      const env = options.env ?? process.env;
      const { registry } = ctx.tools;
      const builtin = standardTools({
        bash: {
          timeoutMs: config.tools.bash.timeout_ms,
          maxTimeoutMs: config.tools.bash.max_timeout_ms,
          maxOutputBytes: config.tools.bash.max_output_bytes,
        },
        webFetchAllowPrivate: config.web_fetch.allow_private,
      });
      for (const tool of builtin) registry.register(tool);
      const save = (name: string, data: Uint8Array, mediaType: ImageMediaType) =>
        saveImage(options.home, name, data, mediaType);
      // T22, M10: shows images to a model that takes them, and tells any other model it cannot.
      registry.register(
        readImageTool({
          home: options.home,
          images: imagesFor(config.model.provider, config.model.images),
          save,
        }),
      );
      await attachMcpFromConfig(ctx, { ...options, env, saveImage: save }); // after core tools (Hermes)
      // The built-in backends and $BDSH_HOME/plugins/<name>/ (plugin.yaml, kind: backend) ones.
      const { backends, report: backendReport } = await terminalRegistry({
        config,
        home: options.home,
        workspace: ctx.workspace,
        env,
      });
      for (const failure of backendReport.failed) options.onPluginFailure?.(failure);
      const report = await loadPlugins({
        // A project's plugins would run outside the sandbox; they load only from a trusted workspace.
        directories: options.projectTrusted
          ? [join(options.home, "plugins"), join(options.projectRoot ?? ctx.workspace, ".bdsh", "plugins")]
          : [join(options.home, "plugins")],
        registry,
        hooks: ctx.hooks,
        backends,
        backendDirectory: join(options.home, "plugins"), // never a project's plugin
        allowToolOverride: config.plugins.allow_tool_override,
      });
      for (const failure of report.failed) options.onPluginFailure?.(failure);

      const policies = installToolPolicies(ctx.hooks, {
        maxInlineTokens: config.spill.max_inline_tokens,
        commands: {
          allowlist: config.command_allowlist,
          maxCommandBytes: config.tools.bash.max_command_bytes,
          ...(options.persistAllowlist ? { persistAllowlist: options.persistAllowlist } : {}),
          ...(options.exactCommands ? { exactCommands: options.exactCommands } : {}),
        },
        repeat: {
          thresholds: config.repeat_reminder.thresholds,
          include: config.repeat_reminder.include,
          exclude: config.repeat_reminder.exclude,
        },
      });
      // G1: the repeat chain is the log's calls since the turn began (a new turn resets it).
      ctx.fold(["turn/start", "tool/call"], (event) => policies.repeatReminder.fold(event));

      const services = ctx.services;
      const blobs = redactingBlobStore(
        quotaBlobStoreFor(ctx.capability("blobs"), config),
        options.redactor ?? Redactor.none,
      );
      services.set("blobs", blobs);
      // C18: what this session has read is in its log, so another server that takes it over knows it too.
      const observations = new FileObservations((path, version) => {
        ctx.log.add({
          type: "files/observed",
          data: { path, mtimeNs: String(version.mtimeNs), size: String(version.size) },
        });
      });
      ctx.fold(["files/observed"], ({ data }) =>
        observations.apply(data.path, { mtimeNs: BigInt(data.mtimeNs), size: BigInt(data.size) }),
      );
      services.set("fileObservations", observations);
      // One list with the terminal's mask: what commands cannot see, the file tools cannot touch either.
      services.set("maskedPaths", [options.home]);
      services.set("todos", new MemoryTodoList());
      // The selected backend, and jobs that leave a redacted receipt in the store (any server reads it).
      const terminal = await setupTerminal(
        {
          sessionId: ctx.sessionId,
          workspace: ctx.workspace,
          cwd: ctx.facts.cwd,
          store: ctx.capability("processes"),
          blobs,
          addContext: (context) => ctx.prompt.addContext(context),
        },
        {
          config,
          backends,
          home: options.home,
          env,
          harnessEnvKeys: options.harnessEnvKeys ?? [],
          redactor: options.redactor ?? Redactor.none,
          projectRoots: trustedDirectories(options.home),
          onNotice: (notice) => {
            void ctx.inbox.steer(notice.text, "job-notice"); // T9: next step when running, wakes when idle
          },
        },
      );
      services.set("terminal", terminal.terminal);
      // L13 (5): how commands run — sandbox, private temp dir, network — as the runtime context says it.
      ctx.prompt.addContext({
        name: "command-sandbox",
        order: CONTEXT_ORDER.commandSandbox,
        render: () =>
          commandSandboxFact(
            ctx.facts.sandbox,
            terminal.terminal.sandboxAvailable(),
            terminal.terminal.tempDir,
            terminal.terminal.network,
          ),
      });
      services.set("jobs", terminal.jobs);
      services.set("jobReceipts", terminal.receipts);
      // A person answering at this terminal is recorded as one answering over HTTP is (approval/*, question/*).
      const recorded = recordedInteractions(ctx.log, {
        approvals: options.approvals,
        questions: options.questionAnswerer,
      });
      if (recorded.approvals) services.set("approvals", recorded.approvals);
      if (recorded.questions) services.set("questionAnswerer", recorded.questions);
      // T19: `web_search` is offered only when a provider is configured and its key resolves.
      const search = webSearchSettingsFrom(config.web_search, env);
      if (search.available)
        services.set(
          "webSearch",
          searchClient({ spec: search.spec, baseUrl: search.baseUrl, key: search.key?.value }),
        );

      ctx.hooks.onSerial("agent/close", async () => {
        await services.get("jobs")?.killAll();
        await services.get("terminal")?.cleanup();
        policies.dispose();
      });
    },
  };
}
