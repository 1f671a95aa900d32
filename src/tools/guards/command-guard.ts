/**
 * The dangerous-command guard (Hermes approval flow, seed 000): a `tools/pre-execute` listener on command
 * tools.
 *
 * Invariants:
 * - A command longer than `maxCommandBytes` (config `tools.bash.max_command_bytes`) is denied before any
 *   analysis, in O(1) for any longer input, with a model-visible text naming the limit and the key
 *   (a 140 KB command froze the server). No approval or allowlist lifts it.
 * - A command matching dangerous-pattern keys (dangerous-commands.ts) asks the user unless every key it
 *   matches was approved for this session or is in `command_allowlist`, or this exact command was approved
 *   for this project (`exactCommands`). The answers, narrowest first: "allow-once" approves this call;
 *   "allow-command" stores this exact command for this project (`exactCommands.add`), nothing broader;
 *   "allow-session" remembers the keys for this guard (one per agent session); "allow-always" (seed 000,
 *   "allow permanently", every project) also calls `persistAllowlist(key)` for each so the caller writes
 *   them to config.
 * - The shell parser loads once per process; `install` starts loading it, and a call waits for it. A
 *   parser that cannot load makes every command dangerous (`analysis-failed`): fail closed.
 * - The guard only ever tightens a decision: a call another listener denied or cancelled stays so.
 * - With no approval channel or policy `never`, the pipeline answers with T16's no-channel text: an
 *   unanswered prompt is a deny.
 */
import type { HookBus } from "../../hooks/hook-bus.js";
import type {} from "../terminal/environment.js";
import type { PreExecuteState } from "../types.js";
import { type AnalyzeOptions, detectDangerousCommands } from "./dangerous-commands.js";
import { loadShellParser } from "./shell-parse.js";

/** Default of `tools.bash.max_command_bytes` (bench/RESULTS.md, "Dangerous-command detector"). */
export const DEFAULT_MAX_COMMAND_BYTES = 65_536;

/** Exact commands approved per project (config/command-approvals.ts in the CLI). */
export interface ExactCommandApprovals {
  allows(workspace: string, command: string): boolean;
  add(workspace: string, command: string, keys: readonly string[]): unknown;
}

export type CommandGuardOptions = {
  /** "Allow this exact command in this project from now on"; without it that answer approves once. */
  exactCommands?: ExactCommandApprovals;
  /** Config `command_allowlist`: pattern keys approved permanently. */
  allowlist: readonly string[];
  /** Writes a key to `command_allowlist` (the "allow permanently" answer). */
  persistAllowlist?: (key: string) => void | Promise<void>;
  /** Tools whose `command` argument is a shell command. */
  tools?: readonly string[];
  /** Config `tools.bash.max_command_bytes`: longer commands are refused. */
  maxCommandBytes?: number;
  /** Bounds of the analysis (tests and benches). */
  analysis?: AnalyzeOptions;
};

/** The size of `command` in UTF-8 bytes if it is within `max`, else `undefined`; O(1) past `max`. */
export function withinBytes(command: string, max: number): number | undefined {
  if (command.length > max) return undefined; // every UTF-16 unit is at least one byte
  if (command.length * 3 <= max) return command.length; // at most three bytes per unit
  const bytes = Buffer.byteLength(command, "utf8");
  return bytes <= max ? bytes : undefined;
}

export function tooLongText(command: string, max: number): string {
  const size =
    command.length > max ? `${command.length} characters` : `${Buffer.byteLength(command, "utf8")} bytes`;
  return (
    `Error: command refused: it is ${size} long, over the ${max}-byte limit (config tools.bash.max_command_bytes). ` +
    "Put long content in a file with the write tool, then run a short command that uses it."
  );
}

/** The reason the guard gives for asking: the matches described, then each pattern key in brackets. */
export function askReason(pending: readonly { key: string; description: string }[]): string {
  return `dangerous command (${pending.map((m) => m.description).join("; ")}) ${pending.map((m) => `[${m.key}]`).join(" ")}`;
}

/** The pattern keys `askReason` named at the end of `reason` (a prompt offers them by name); [] if none. */
export function patternKeysOf(reason: string): string[] {
  const tail = /^dangerous command \(.*\)((?: \[[a-z0-9-]+\])+)$/s.exec(reason)?.[1] ?? "";
  return [...tail.matchAll(/\[([a-z0-9-]+)\]/g)].map((m) => m[1]!);
}

export class CommandGuard {
  private readonly sessionAllowed = new Set<string>();
  private readonly allowlist: Set<string>;
  private readonly tools: Set<string>;
  private readonly maxCommandBytes: number;

  constructor(private readonly options: CommandGuardOptions) {
    this.allowlist = new Set(options.allowlist);
    this.tools = new Set(options.tools ?? ["bash"]);
    this.maxCommandBytes = options.maxCommandBytes ?? DEFAULT_MAX_COMMAND_BYTES;
  }

  install(hooks: HookBus): () => void {
    loadShellParser().catch(() => {}); // start loading now; a failure is met (fail closed) at the first call
    return hooks.onWaterfall("tools/pre-execute", (state) => this.decide(state), {
      plugin: "dangerous-commands",
    });
  }

  async decide(state: PreExecuteState): Promise<PreExecuteState> {
    if (state.decision.kind !== "allow" || !this.tools.has(state.call.name)) return state;
    const command = state.call.args?.command;
    if (typeof command !== "string") return state;
    if (withinBytes(command, this.maxCommandBytes) === undefined)
      return { ...state, decision: { kind: "deny", reason: tooLongText(command, this.maxCommandBytes) } };
    // Hermes `skip_container_guards`: the selected backend's trait, read fail-soft by the
    // registry, so a provider whose attribute throws keeps the guard on. The size limit always applies.
    if (state.exec.services.get("terminal")?.traits?.skipContainerGuards === true) return state;
    const matches = await detectDangerousCommands(command, this.options.analysis);
    const pending = matches.filter((m) => !this.sessionAllowed.has(m.key) && !this.allowlist.has(m.key));
    if (pending.length === 0) return state;
    const workspace = state.exec.workspace;
    if (this.options.exactCommands?.allows(workspace, command)) return state;
    return {
      ...state,
      decision: {
        kind: "ask",
        summary: command,
        reason: askReason(pending),
        onAnswer: async (answer) => {
          if (answer === "allow-command") {
            this.options.exactCommands?.add(
              workspace,
              command,
              matches.map((m) => m.key),
            );
            return;
          }
          if (answer !== "allow-session" && answer !== "allow-always") return;
          for (const { key } of pending) {
            this.sessionAllowed.add(key);
            if (answer === "allow-always") {
              this.allowlist.add(key);
              await this.options.persistAllowlist?.(key);
            }
          }
        },
      },
    };
  }
}
