/**
 * The services a tool call can reach (types.ts `ToolServices`): a plain map filled by the loop per agent.
 *
 * Invariants:
 * - No globals: every call reads its services from `exec.services`, so two agents in one process never share
 *   approval state, file observations or jobs by accident (STYLE, Hermes's approval bypasses).
 * - `require` throws a plain Error naming the service; the pipeline turns it into `Error: …` (T2).
 */
import type { ToolServiceMap, ToolServices } from "./types.js";

export class ServiceMap implements ToolServices {
  private readonly entries = new Map<keyof ToolServiceMap, unknown>();

  constructor(initial: Partial<ToolServiceMap> = {}) {
    for (const [name, value] of Object.entries(initial)) {
      if (value !== undefined) this.entries.set(name as keyof ToolServiceMap, value);
    }
  }

  set<K extends keyof ToolServiceMap>(name: K, value: ToolServiceMap[K]): this {
    this.entries.set(name, value);
    return this;
  }

  get<K extends keyof ToolServiceMap>(name: K): ToolServiceMap[K] | undefined {
    return this.entries.get(name) as ToolServiceMap[K] | undefined;
  }

  require<K extends keyof ToolServiceMap>(name: K): ToolServiceMap[K] {
    const value = this.get(name);
    if (value === undefined) throw new Error(`the "${String(name)}" service is not available`);
    return value;
  }
}
