/**
 * The standard tool list and tool policies (T22): what a coding agent gets by default.
 *
 * `standardTools()` returns the builtin definitions in a fixed order; `createStandardRegistry()` registers
 * them. `installToolPolicies()` puts the pipeline listeners on the bus in DSH's order: the spill policy
 * prepended on post-execute (C14), the dangerous-command guard on pre-execute, the repeat-tool reminder
 * on post-execute (G1). Services are the loop's to provide per agent (see README).
 */
import type { HookBus } from "../hooks/hook-bus.js";
import { BASH_DEFAULTS, type BashToolOptions, createBashTool } from "./bash/bash-tool.js";
import { editTool } from "./files/edit-tool.js";
import { globTool } from "./files/glob-tool.js";
import { grepTool } from "./files/grep-tool.js";
import { presentTool } from "./files/present-tool.js";
import { readTool } from "./files/read-tool.js";
import { writeTool } from "./files/write-tool.js";
import { CommandGuard, type CommandGuardOptions } from "./guards/command-guard.js";
import { type RepeatReminderOptions, RepeatToolReminder } from "./guards/repeat-reminder.js";
import { askUserQuestionTool } from "./interaction/ask-user-tool.js";
import { jobKillTool, jobListTool, jobOutputTool } from "./jobs/job-tools.js";
import { ToolRegistry } from "./registry.js";
import { installSpillPolicy } from "./spill/spill-policy.js";
import { todoWriteTool } from "./todo/todo-tool.js";
import type { AnyToolDefinition } from "./types.js";
import { createWebFetchTool, webSearchTool } from "./web/web-tools.js";

export type StandardToolsOptions = {
  bash?: BashToolOptions;
  /** Pending config key `web_fetch.allow_private`. */
  webFetchAllowPrivate?: boolean;
};

export function standardTools(options: StandardToolsOptions = {}): AnyToolDefinition[] {
  return [
    createBashTool(options.bash ?? BASH_DEFAULTS),
    readTool,
    writeTool,
    editTool,
    globTool,
    grepTool,
    jobOutputTool,
    jobListTool,
    jobKillTool,
    todoWriteTool,
    askUserQuestionTool,
    createWebFetchTool({ allowPrivate: options.webFetchAllowPrivate ?? false }),
    webSearchTool,
    presentTool,
  ];
}

export function createStandardRegistry(options: StandardToolsOptions = {}): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of standardTools(options)) registry.register(tool);
  return registry;
}

export type ToolPoliciesOptions = {
  /** Config `spill.max_inline_tokens`. */
  maxInlineTokens: number | undefined;
  commands: CommandGuardOptions;
  repeat?: RepeatReminderOptions;
};

export type ToolPolicies = {
  commandGuard: CommandGuard;
  repeatReminder: RepeatToolReminder;
  dispose(): void;
};

/** One set per agent: the guard's session approvals and the reminder's chain are per agent. */
export function installToolPolicies(hooks: HookBus, options: ToolPoliciesOptions): ToolPolicies {
  const commandGuard = new CommandGuard(options.commands);
  const repeatReminder = new RepeatToolReminder(options.repeat);
  const disposers = [
    installSpillPolicy(hooks, { maxInlineTokens: options.maxInlineTokens }),
    commandGuard.install(hooks),
    repeatReminder.install(hooks),
  ];
  return {
    commandGuard,
    repeatReminder,
    dispose: () => {
      for (const dispose of disposers) dispose();
    },
  };
}
