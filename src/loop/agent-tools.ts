/**
 * The agent's tools (T1, T2, SP8): one registry and one pipeline per agent. Every plugin registers its tools
 * here while it is set up — the builtin tools, plugin tools from `$BDSH_HOME/plugins`, MCP servers',
 * planning's, the subagent tools, skills — and every call goes through the same pipeline (validation,
 * `tools/pre-execute`, approvals, `tools/execute`, `tools/post-execute`) on the agent's hook bus.
 *
 * Invariants:
 * - What is offered is decided once, when every plugin is set up and before `agent/ready`: the registered
 *   tools, in registration order, that the session's allowed toolsets select and that are available
 *   (required env vars, `isAvailable`). So the offer does not depend on the order plugins were set up in
 *   relative to one another, only on the order they registered.
 * - SP8: the declarations stay the same for the session's requests. A tool that joins later (`offer`: an
 *   MCP server's `tools/list_changed`) is declared after the others; a declaration, once offered, is never
 *   rewritten or removed.
 * - A call of a tool that is not offered answers `unknown tool`, whatever is registered.
 */
import type { HookBus } from "../hooks/hook-bus.js";
import type { ToolSpec } from "../model/types.js";
import { ToolPipeline } from "../tools/pipeline.js";
import { type RegisterOptions, ToolRegistry } from "../tools/registry.js";
import type {
  AnyToolDefinition,
  ConcurrencyClass,
  ToolCallRequest,
  ToolExec,
  ToolOutput,
  ToolServices,
  ToolSessionInfo,
} from "../tools/types.js";
import type { ToolHost } from "./tool-host.js";

/** What a plugin may do with the agent's tools. */
export type AgentToolsControl = {
  /** The agent's one registry (toolsets, composites, shadowing rules; the plugin-tool loader fills it). */
  readonly registry: ToolRegistry;
  /** Registers a tool; during setup it is offered if available, after it only through `offer`. */
  register(tool: AnyToolDefinition, options?: RegisterOptions): void;
  /** The declarations on offer, in order (empty until every plugin is set up). */
  declarations(): readonly ToolSpec[];
  /** SP8: offers registered tools that were not offered yet, declared after the others. */
  offer(names: readonly string[]): string[];
};

/** The section a tool adds to the system prompt while it is offered (SP1/SP9). */
export type ToolSectionSink = (name: string, section: { order: number; text: string }) => void;

export class AgentTools implements ToolHost, AgentToolsControl {
  readonly registry = new ToolRegistry();
  private readonly pipeline: ToolPipeline;
  private readonly offered = new Set<string>();
  private declared: ToolSpec[] = [];

  constructor(
    hooks: HookBus,
    private readonly addSection: ToolSectionSink,
  ) {
    this.pipeline = new ToolPipeline({ registry: this.registry, hooks, visible: () => this.offered });
  }

  register(tool: AnyToolDefinition, options?: RegisterOptions): void {
    this.registry.register(tool, options);
  }

  /** The offer, decided once every plugin is set up (the agent calls this before `agent/ready`). */
  async decide(context: {
    env: NodeJS.ProcessEnv;
    services: ToolServices;
    session: ToolSessionInfo;
  }): Promise<void> {
    const { toolsAs, allowedToolsets } = context.session;
    const allowed = allowedToolsets && new Set(allowedToolsets);
    const candidates = allowed
      ? this.registry.names().filter((name) => allowed.has(this.registry.get(name)?.toolset ?? ""))
      : this.registry.names();
    const names = await this.registry.available(candidates, {
      env: context.env,
      services: context.services,
      // A fork, subagent or Ralph session is not offered create_goal; S1: a delegated fork is offered its
      // parent's tools (the prefix cache), and refuses at call time what it may not do.
      session: toolsAs ? { ...context.session, ...toolsAs } : context.session,
    });
    this.offer(names);
  }

  offer(names: readonly string[]): string[] {
    const fresh = names.filter((name) => !this.offered.has(name) && this.registry.has(name));
    if (fresh.length === 0) return [];
    for (const name of fresh) {
      this.offered.add(name);
      const section = this.registry.get(name)?.promptSection;
      if (section) this.addSection(name, section);
    }
    // A new array: the request builder hashes the declarations by identity.
    this.declared = [...this.declared, ...this.registry.declarations(fresh)];
    return fresh;
  }

  declarations(): ToolSpec[] {
    return this.declared;
  }

  concurrencyOf(call: ToolCallRequest): ConcurrencyClass {
    return this.pipeline.concurrencyOf(call);
  }

  isReadOnly(call: ToolCallRequest): boolean {
    return this.pipeline.isReadOnly(call);
  }

  run(call: ToolCallRequest, exec: ToolExec): Promise<ToolOutput> {
    return this.pipeline.run(call, exec);
  }
}
