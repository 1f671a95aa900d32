/**
 * The dangerous-command guard (Hermes approval flow): a `tools/pre-execute` listener on command tools.
 *
 * Invariants:
 * - A matched command asks the user unless its pattern key was approved for this session or is in
 *   `command_allowlist`. "allow-session" remembers the key for this guard (one per agent session);
 *   "allow-always" also calls `persistAllowlist(key)` so the caller writes it to config.
 * - The guard only ever tightens a decision: a call another listener denied or cancelled stays so.
 * - With no approval channel or policy `never`, the pipeline answers with T16's no-channel text: an
 *   unanswered prompt is a deny.
 */
import type { HookBus } from "../../hooks/hook-bus.js";
import type { PreExecuteState } from "../types.js";
import { detectDangerousCommand } from "./dangerous-commands.js";

export type CommandGuardOptions = {
  /** Config `command_allowlist`: pattern keys approved permanently. */
  allowlist: readonly string[];
  /** Writes a key to `command_allowlist` (the "allow permanently" answer). */
  persistAllowlist?: (key: string) => void | Promise<void>;
  /** Tools whose `command` argument is a shell command. */
  tools?: readonly string[];
};

export class CommandGuard {
  private readonly sessionAllowed = new Set<string>();
  private readonly allowlist: Set<string>;
  private readonly tools: Set<string>;

  constructor(private readonly options: CommandGuardOptions) {
    this.allowlist = new Set(options.allowlist);
    this.tools = new Set(options.tools ?? ["bash"]);
  }

  install(hooks: HookBus): () => void {
    return hooks.onWaterfall("tools/pre-execute", (state) => this.decide(state), {
      plugin: "dangerous-commands",
    });
  }

  decide(state: PreExecuteState): PreExecuteState {
    if (state.decision.kind !== "allow" || !this.tools.has(state.call.name)) return state;
    const command = state.call.args?.command;
    if (typeof command !== "string") return state;
    const match = detectDangerousCommand(command);
    if (!match || this.sessionAllowed.has(match.key) || this.allowlist.has(match.key)) return state;
    return {
      ...state,
      decision: {
        kind: "ask",
        summary: command,
        reason: `dangerous command (${match.description}) [${match.key}]`,
        onAnswer: async (answer) => {
          if (answer === "allow-session" || answer === "allow-always") this.sessionAllowed.add(match.key);
          if (answer === "allow-always") {
            this.allowlist.add(match.key);
            await this.options.persistAllowlist?.(match.key);
          }
        },
      },
    };
  }
}
