/**
 * The tool registry and toolsets (Hermes tools runtime; T1).
 *
 * Invariants:
 * - A tool is registered once. Names match `[A-Za-z0-9_-]{1,64}`. A registration that would shadow a tool
 *   of another toolset (or re-register one of the same toolset) is rejected unless `allowShadow` is set.
 * - Toolsets resolve from enabled/disabled lists; a composite toolset expands to its members (toolsets or
 *   tool names), recursively, cycles ignored. Neither list: every toolset.
 * - Availability (required env vars, then `isAvailable`) is evaluated once per `available()` call (one
 *   request); an exception or a rejected promise means unavailable.
 * - Order is registration order everywhere, so the declarations sent to the model are stable (SP8).
 */
import type { AnyToolDefinition, AvailabilityContext, ObjectSchema } from "./types.js";

export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export type RegisterOptions = {
  /** Defaults to the tool's own `toolset`. */
  toolset?: string;
  /** Replace an existing tool of the same name (Hermes `override=True`). */
  allowShadow?: boolean;
  /** Who registered it (a plugin path), for error messages. */
  source?: string;
};

export type ToolsetSelection = { enabled?: readonly string[]; disabled?: readonly string[] };

export type ToolDeclaration = { name: string; description: string; parameters: ObjectSchema };

/**
 * Declarations by schema, then name and description: every agent of a process registers its tools from the
 * same module-level schemas (deep-frozen by `toolParameters`), so they share one frozen declaration per tool,
 * whose JSON text is then written once per process (log/json-text.ts), not once per agent and request. A
 * schema that is not frozen (an MCP server's) gets a plain declaration each time, as before.
 */
const shared = new WeakMap<ObjectSchema, Map<string, Map<string, ToolDeclaration>>>();

function declarationOf(name: string, description: string, parameters: ObjectSchema): ToolDeclaration {
  if (!Object.isFrozen(parameters)) return { name, description, parameters };
  let byName = shared.get(parameters);
  if (!byName) {
    byName = new Map();
    shared.set(parameters, byName);
  }
  // By name, then by description: the same module-level description string every time, whose hash V8
  // keeps, where a joined key would be a new string of a kilobyte or two to hash on every agent opened.
  let byDescription = byName.get(name);
  if (!byDescription) {
    byDescription = new Map();
    byName.set(name, byDescription);
  }
  let declaration = byDescription.get(description);
  if (!declaration) {
    declaration = Object.freeze({ name, description, parameters });
    byDescription.set(description, declaration);
  }
  return declaration;
}

export class ToolRegistrationError extends Error {
  constructor(
    readonly code: "INVALID_TOOL_NAME" | "TOOL_SHADOWED" | "TOOLSET_CONFLICT",
    message: string,
  ) {
    super(message);
    this.name = "ToolRegistrationError";
  }
}

type Entry = { tool: AnyToolDefinition; toolset: string; source: string | undefined };

export class ToolRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly composites = new Map<string, readonly string[]>();

  register(tool: AnyToolDefinition, options: RegisterOptions = {}): void {
    if (!TOOL_NAME.test(tool.name)) {
      throw new ToolRegistrationError(
        "INVALID_TOOL_NAME",
        `tool name "${tool.name}" must match [A-Za-z0-9_-]{1,64}`,
      );
    }
    const toolset = options.toolset ?? tool.toolset;
    const existing = this.entries.get(tool.name);
    if (existing && !options.allowShadow) {
      const by = existing.source ? ` (registered by ${existing.source})` : "";
      throw new ToolRegistrationError(
        "TOOL_SHADOWED",
        `tool "${tool.name}" is already registered in toolset "${existing.toolset}"${by}`,
      );
    }
    if (this.composites.has(toolset)) {
      throw new ToolRegistrationError("TOOLSET_CONFLICT", `"${toolset}" is a composite toolset`);
    }
    // Delete first so a shadowing tool takes the end of the order, like any new registration.
    this.entries.delete(tool.name);
    this.entries.set(tool.name, { tool: { ...tool, toolset }, toolset, source: options.source });
  }

  unregister(name: string): boolean {
    return this.entries.delete(name);
  }

  /** A named bundle of toolsets and/or tool names (Hermes composite toolsets). */
  defineComposite(name: string, members: readonly string[]): void {
    for (const entry of this.entries.values()) {
      if (entry.toolset === name) {
        throw new ToolRegistrationError("TOOLSET_CONFLICT", `"${name}" is already a toolset of tools`);
      }
    }
    this.composites.set(name, [...members]);
  }

  get(name: string): AnyToolDefinition | undefined {
    return this.entries.get(name)?.tool;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  toolsets(): string[] {
    return [...new Set([...this.entries.values()].map((entry) => entry.toolset)), ...this.composites.keys()];
  }

  /** Tool names selected by the toolset lists, in registration order. Unknown toolset names select nothing. */
  resolve(selection: ToolsetSelection = {}): string[] {
    const enabled = selection.enabled ? this.expand(selection.enabled) : undefined;
    const disabled = this.expand(selection.disabled ?? []);
    return this.names().filter((name) => (!enabled || enabled.has(name)) && !disabled.has(name));
  }

  /** The subset of `names` available now; each check runs at most once per call. */
  async available(names: readonly string[], context: AvailabilityContext): Promise<string[]> {
    const cache = new Map<unknown, Promise<boolean>>();
    const results = await Promise.all(
      names.map(async (name) => {
        const tool = this.get(name);
        if (!tool) return false;
        if (!(tool.requiredEnv ?? []).every((key) => Boolean(context.env[key]))) return false;
        const check = tool.isAvailable;
        if (!check) return true;
        let pending = cache.get(check);
        if (!pending) {
          pending = (async () => Boolean(await check(context)))().catch(() => false);
          cache.set(check, pending);
        }
        return pending;
      }),
    );
    return names.filter((_, index) => results[index]);
  }

  /** What the request declares, in registration order regardless of the order of `names` (SP8). */
  declarations(names: Iterable<string>): ToolDeclaration[] {
    const wanted = new Set(names);
    const out: ToolDeclaration[] = [];
    for (const [name, { tool }] of this.entries) {
      if (wanted.has(name)) out.push(declarationOf(name, tool.description, tool.parameters));
    }
    return out;
  }

  private expand(members: readonly string[], seen = new Set<string>()): Set<string> {
    const out = new Set<string>();
    for (const member of members) {
      if (seen.has(member)) continue;
      seen.add(member);
      const composite = this.composites.get(member);
      if (composite) {
        for (const name of this.expand(composite, seen)) out.add(name);
        continue;
      }
      let matchedToolset = false;
      for (const [name, entry] of this.entries) {
        if (entry.toolset === member) {
          out.add(name);
          matchedToolset = true;
        }
      }
      if (!matchedToolset && this.entries.has(member)) out.add(member);
    }
    return out;
  }
}
