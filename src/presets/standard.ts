/**
 * The standard preset: the default composition of plugins, in order. A product changes behaviour by
 * changing this list, not by forking the loop (ARCHITECTURE "Layers").
 *
 * Order matters where listeners share a hook: on `agent/pre-step` the archived guard runs before anything
 * adds messages, and compaction runs before the context plugins add this step's messages; on
 * `agent/request-error` compaction comes first, so an overflow is compacted before the retry policy (which
 * in `always` mode would retry it unchanged) sees it (C10).
 */

import type { InstructionGate } from "../config/instruction-review.js";
import { bdshHome } from "../config/paths.js";
import type { Config } from "../config/schema.js";
import { compactionSettingsFrom } from "../context/compaction/budget.js";
import { compactionPlugin } from "../context/compaction/plugin.js";
import { instructionsPlugin } from "../context/instructions.js";
import { runtimeContextPlugin } from "../context/runtime-context.js";
import { skillsPlugin } from "../context/skills.js";
import { systemPromptPlugin } from "../context/system-prompt.js";
import { timeContextPlugin } from "../context/time-context.js";
import { workingDirectoryPlugin } from "../context/working-directory.js";
import { archivedSessionGuard } from "../guards/archived-session.js";
import { autoReviewPlugin } from "../guards/auto-review.js";
import { gitRepairPlugin } from "../guards/git-repair/plugin.js";
import { budgetSettingsFrom, sessionBudgetPlugin } from "../guards/session-budget.js";
import { stepLimitPlugin } from "../guards/step-limit.js";
import type { Plugin } from "../loop/plugin.js";
import { retrySettingsFrom } from "../model/retry.js";
import { continuationPlugins } from "../planning/continuation.js";
import { goalPlugin } from "../planning/goal-plugin.js";
import { goalStallPlugin } from "../planning/goal-stall.js";
import { planModePlugin } from "../planning/plan-mode.js";
import { schedulesPlugin } from "../planning/schedules.js";
import { llmRetryPlugin } from "../retry/llm-retry.js";
import type { ChildDriver } from "../subagents/lifecycle.js";
import { subagentSettingsFrom, subagentsPlugin } from "../subagents/plugin.js";
import { genAiTracingPlugin } from "../telemetry/genai-tracing.js";
import { sessionTitlePlugin, sessionTitleSettingsFrom } from "./session-title.js";

export type StandardPresetOptions = {
  config: Config;
  /** The tools plugin (./standard-tools.ts); first, so later plugins can register tools on its registry. */
  tools?: Plugin | undefined;
  /** `$BDSH_HOME`: workspace instructions and skills are read from it (default: from the environment). */
  home?: string | undefined;
  /** Plugins appended after the standard ones (a product's own). */
  extra?: readonly Plugin[];
  /**
   * Workspace trust: only a trusted workspace's instruction files and `.bdsh/skills` are read.
   * Default false.
   */
  projectTrusted?: boolean;
  /**
   * The directory whose `.bdsh/skills` is the project's (the trusted root); default the workspace. The
   * instruction chain starts no higher (SECURITY.md row 1d).
   */
  projectRoot?: string;
  /** Row 1d: which project instruction files and skills a person accepted; none given: all of them. */
  instructionGate?: InstructionGate;
  /** For tests: the retry jitter source. */
  random?: () => number;
  /** S1: how this process drives children (in process, or a server's runner); none: no subagent tools. */
  children?: ChildDriver | undefined;
};

export function standardPlugins(options: StandardPresetOptions): Plugin[] {
  const { retry, compaction, context, instructions } = options.config;
  const home = options.home ?? bdshHome(process.env);
  const projectTrusted = options.projectTrusted ?? false;
  const gate = options.instructionGate;
  return [
    ...(options.tools ? [options.tools] : []), // T22: registry, pipeline, policies, services
    archivedSessionGuard, // L18
    gitRepairPlugin(), // git settings that run programs, taken out after each command (SECURITY.md 10g–10i)
    stepLimitPlugin({ maxStepsPerTurn: options.config.loop.max_steps_per_turn }), // L3: before anything adds to the step
    sessionBudgetPlugin(budgetSettingsFrom(options.config)), // budget.*: off unless set
    autoReviewPlugin(options.config.auto_review), // S7: consulted only under approval: auto
    compactionPlugin(compactionSettingsFrom(compaction)), // C2–C12: before anything adds this step's messages; first on request-error (C10)
    systemPromptPlugin(), // SP2, SP3
    runtimeContextPlugin, // L13, SP4
    workingDirectoryPlugin(), // T22: working_directory; the cwd is the log's (session/cwd), SP4 reports it
    timeContextPlugin({ refreshMs: context.time_refresh_ms, timeZone: context.time_zone }), // SP5 (prepends itself)
    instructionsPlugin({
      home,
      maxBytes: instructions.max_bytes,
      projectTrusted,
      ...(options.projectRoot ? { trustedRoot: options.projectRoot } : {}),
      ...(gate ? { gate } : {}),
    }), // SP6, row 1d
    skillsPlugin({
      home,
      projectTrusted,
      ...(options.projectRoot ? { projectRoot: options.projectRoot } : {}),
      ...(gate ? { gate } : {}),
    }), // SP7, T20: after the tools plugin, whose registry takes the skill tool
    llmRetryPlugin(retrySettingsFrom(retry), options.random), // M18, L10
    goalPlugin(options.config.goal), // P3–P5: goal tools and rounds
    goalStallPlugin(), // P4: rounds without a tool call or goal update block the goal (after goalPlugin)
    planModePlugin(), // P2
    schedulesPlugin({ minEverySeconds: options.config.schedules.min_every_seconds }), // S8
    ...(options.children
      ? [
          subagentsPlugin({
            settings: subagentSettingsFrom(options.config.subagents),
            driver: options.children,
          }),
        ]
      : []), // S1–S5
    ...continuationPlugins(options.config.continuation), // §9: length, empty, todos, announced, report
    sessionTitlePlugin(sessionTitleSettingsFrom(options.config)), // a side request off the hot path (M5: effort off)
    genAiTracingPlugin({ captureContent: options.config.telemetry.capture_content }), // off without a tracer provider
    ...(options.extra ?? []),
  ];
}
