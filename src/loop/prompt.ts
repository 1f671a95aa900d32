/**
 * SP1: the system prompt as an ordered registry of sections, and L13: runtime context as a separate
 * registry whose snapshot goes to the model as a user message, only when it changed.
 *
 * - Sections sort by `order`, ties by name; `{{name}}` is interpolated strictly (an unknown or valueless
 *   variable throws); empty sections are dropped; the rest join with a blank line.
 * - A section with `visibleWith` renders only while that tool is offered (SP9).
 * - Runtime contexts render to short facts; the snapshot lists them under one header line. When every
 *   context becomes empty after a non-empty snapshot, the "none" message says earlier ones no longer apply.
 */

export type PromptSection = {
  name: string;
  order: number;
  text: string | (() => string);
  /** Render only while the tool of this name is visible (SP9). */
  visibleWith?: string;
};

export type RuntimeContext = { name: string; order: number; render(): string | undefined };

export class PromptTemplateError extends Error {
  readonly code = "PROMPT_TEMPLATE";
}

/** SP1 section orders we use (a subset of the seed's table). */
export const SECTION_ORDER = {
  identity: -1000,
  personaPrefix: 0,
  plan: 500,
  toolBash: 1000,
  toolRead: 1100,
  toolWrite: 1200,
  toolEdit: 1300,
  toolGlob: 1400,
  toolGrep: 1500,
  toolJobs: 1600,
  toolWeb: 2100,
  toolGoal: 2400,
  toolSubagent: 2800,
  structuredOutput: 9900,
  personaSuffix: 10200,
} as const;

/** SP1 context orders. */
export const CONTEXT_ORDER = {
  workingDirectory: 100,
  sandbox: 110,
  commandSandbox: 112,
  approval: 115,
  delegation: 120,
} as const;

export const RUNTIME_CONTEXT_HEADER =
  "Runtime context for this session. This snapshot replaces any earlier runtime-context snapshot.";
export const RUNTIME_CONTEXT_NONE =
  "Runtime context: none. Earlier runtime-context snapshots no longer apply.";

export class PromptRegistry {
  private readonly sections = new Map<string, PromptSection>();
  private readonly contexts = new Map<string, RuntimeContext>();
  private readonly variables = new Map<string, () => string | undefined>();
  /** Both registries in render order, sorted again only after a change (they are read every step). */
  private sortedSections: PromptSection[] | undefined;
  private sortedContexts: RuntimeContext[] | undefined;

  addSection(section: PromptSection): void {
    this.sections.set(section.name, section);
    this.sortedSections = undefined;
  }

  removeSection(name: string): void {
    if (this.sections.delete(name)) this.sortedSections = undefined;
  }

  addContext(context: RuntimeContext): void {
    this.contexts.set(context.name, context);
    this.sortedContexts = undefined;
  }

  setVariable(name: string, value: string | (() => string | undefined)): void {
    this.variables.set(name, typeof value === "function" ? value : () => value);
  }

  /** The system prompt for the given visible tools. */
  renderSystem(visibleTools: ReadonlySet<string>): string {
    this.sortedSections ??= [...this.sections.values()].sort(
      (a, b) => a.order - b.order || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    );
    // Joined, not concatenated: the text is compared with the last one every step, and a flat string
    // compares far faster than a chain of concatenations.
    const texts: string[] = [];
    for (const s of this.sortedSections) {
      if (s.visibleWith !== undefined && !visibleTools.has(s.visibleWith)) continue;
      const text = this.interpolate(typeof s.text === "function" ? s.text() : s.text, s.name).trim();
      if (text.length > 0) texts.push(text);
    }
    return texts.join("\n\n");
  }

  /** The runtime-context snapshot text, or undefined when no context has anything to say. */
  renderRuntimeContext(): string | undefined {
    this.sortedContexts ??= [...this.contexts.values()].sort(
      (a, b) => a.order - b.order || (a.name < b.name ? -1 : 1),
    );
    const texts = [RUNTIME_CONTEXT_HEADER];
    for (const c of this.sortedContexts) {
      const text = c.render()?.trim();
      if (text) texts.push(text);
    }
    return texts.length > 1 ? texts.join("\n\n") : undefined;
  }

  private interpolate(text: string, section: string): string {
    // Most sections name no variable: the scan for `{{` is far cheaper than the replace's regex.
    if (!text.includes("{{")) return text;
    return text.replace(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g, (_match, name: string) => {
      const value = this.variables.get(name)?.();
      if (value === undefined || value === "") {
        throw new PromptTemplateError(`prompt section "${section}" uses {{${name}}}, which has no value`);
      }
      return value;
    });
  }
}

/**
 * L13: the message to append, given the snapshot text now and the last snapshot still on the surface.
 * Undefined when nothing needs saying.
 */
export function runtimeContextMessage(
  current: string | undefined,
  lastRetained: string | undefined,
): string | undefined {
  if (current !== undefined) return current === lastRetained ? undefined : current;
  if (lastRetained === undefined || lastRetained === RUNTIME_CONTEXT_NONE) return undefined;
  return RUNTIME_CONTEXT_NONE;
}
