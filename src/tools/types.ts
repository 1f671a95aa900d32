/**
 * What a tool is and what it gets when it runs (T1–T6, T15; Hermes tools runtime).
 *
 * A tool is declared once: name, toolset, parameters (snake_case; a TypeBox schema given as
 * `toolParameters(Schema)`, ./schema.ts, or plain JSON Schema from a plugin or MCP server), description,
 * availability, required env vars, concurrency class and timeout, and `execute(args, exec)`. The pipeline validates the
 * arguments before `execute` is called, so `execute` receives arguments that match its schema.
 *
 * Invariants:
 * - Every call ends in a `ToolOutput`; a failing tool never ends the turn (T2). `Error: …` texts with
 *   `isError: true` are what the model sees; `code` stays in metadata (T3).
 * - `exec.signal` is cooperative; a started body always settles (T5).
 * - Services (store, terminal, approvals, spill, jobs) arrive through `exec`, never through globals or
 *   process-wide environment variables (STYLE: Hermes's approval bypasses came from global state).
 */
import type { HookBus } from "../hooks/hook-bus.js";
import type { ApprovalDecision } from "../log/events.js";
import type { ToolDetails } from "../log/tool-details.js";
import type { SessionRow } from "../store/store.js";

/** JSON Schema for an object of arguments (T1: object-rooted, snake_case properties). */
export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  [keyword: string]: unknown;
};

export type ObjectSchema = JsonSchema & { type: "object"; properties: Record<string, JsonSchema> };

/** L19: `safe` calls may share the parallel pool; anything else is an exclusive barrier (fail-closed). */
export type ConcurrencyClass = "safe" | "exclusive";

export type ToolOutput = {
  /** Model-visible text. Errors start with `Error: ` (T3). */
  text: string;
  isError?: boolean;
  /** Machine-readable code (`TOOL_TIMEOUT`, `ABORTED_BEFORE_DISPATCH`, …); never shown to the model. */
  code?: string;
  /** T15: user messages delivered to the next-step inbox after the step's results, in model order. */
  additionalContexts?: string[];
  /** C14: set by the spill policy when the full text was stored as a blob. */
  spill?: { blobId: string; bytes: number };
  /** Exempt from the spill policy (C14: `read` results). */
  noSpill?: boolean;
  metadata?: Record<string, unknown>;
  /** What the call did, for people's views; stored on `tool/result.details`, never sent to the model. */
  details?: ToolDetails;
};

/** The facts about the session a tool runs in. */
export type ToolSessionInfo = {
  sessionId: string;
  /** Top-level agent or a delegated child (S1: approval pinned to never for children). */
  kind: SessionRow["kind"];
  depth: number;
  /**
   * S1 fork: offer the tools as the parent's session would have them (same declarations, so the fork's
   * requests extend the parent's and the provider's prefix cache is reused); refusals happen at call time.
   */
  toolsAs?: { kind: SessionRow["kind"]; depth: number };
  /** Hermes `allowed_toolsets`: a child launched through the lifecycle API is offered only these toolsets. */
  allowedToolsets?: readonly string[];
};

export type SandboxMode = "read-only" | "workspace-write" | "danger-full-access";
/** T16; `auto` sends each approval to the auto-reviewer first (S7). */
export type ApprovalPolicy = "ask" | "never" | "auto";

/** Per-call execution context. */
export type ToolExec = {
  callId: string;
  toolName: string;
  session: ToolSessionInfo;
  /** The workspace root and the current working directory (absolute). */
  workspace: string;
  cwd: string;
  sandbox: SandboxMode;
  approval: ApprovalPolicy;
  signal: AbortSignal;
  /** T15: end the turn after this step's batch (exit_plan_mode dismissal, structured_output). */
  concludeTurn(): void;
  /** Services shared by every call of the agent; a tool takes what it needs. */
  services: ToolServices;
};

/**
 * Services are registered by plugins under a name; tools look them up. Keeping this an open record (typed by
 * declaration merging on `ToolServiceMap`) means a new service is one module, not a change here.
 */
// biome-ignore lint/suspicious/noEmptyInterface: extended by declaration merging where services are defined.
export interface ToolServiceMap {}

export type ToolServices = {
  get<K extends keyof ToolServiceMap>(name: K): ToolServiceMap[K] | undefined;
  require<K extends keyof ToolServiceMap>(name: K): ToolServiceMap[K];
};

export type AvailabilityContext = {
  env: NodeJS.ProcessEnv;
  services: ToolServices;
  session: ToolSessionInfo;
};

export type ToolDefinition<Args = Record<string, unknown>> = {
  /** `[A-Za-z0-9_-]{1,64}` (T1); MCP tools are `mcp__<server>__<tool>`. */
  name: string;
  toolset: string;
  description: string;
  parameters: ObjectSchema;
  /** Environment variables that must be set for the tool to be offered. */
  requiredEnv?: string[];
  /** Hermes check_fn: cached per request; throwing means unavailable. */
  isAvailable?: (context: AvailabilityContext) => boolean | Promise<boolean>;
  /** L19 classification, re-checked just before the call starts. Default: exclusive. */
  concurrency?: ConcurrencyClass | ((args: Args) => ConcurrencyClass);
  /**
   * The call changes nothing outside the session's own log and memory (reads, searches, GETs). L17 "Here:"
   * asks for the flush before side-effecting tools, so such a call starts without waiting for one: a crash
   * before the next flush loses only a read. Default: false (fail-closed, the call waits for the flush).
   */
  readOnly?: boolean | ((args: Args) => boolean);
  /** T6: the pipeline aborts the body and answers `Error: tool call timed out after <ms>ms`. */
  timeoutMs?: number;
  /** SP1/SP9: a system-prompt section rendered only while this tool is visible. */
  promptSection?: { order: number; text: string };
  execute(args: Args, exec: ToolExec): Promise<ToolOutput>;
};

// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every argument type.
export type AnyToolDefinition = ToolDefinition<any>;

/** A call as the model made it; `arguments` is the exact string, `args` its parse (frozen) when it parsed. */
export type ToolCallRequest = {
  callId: string;
  name: string;
  rawArguments: string;
  args: Readonly<Record<string, unknown>> | undefined;
};

/**
 * T16: what an approval answerer can say. `allow-command`: this exact command in this project from now on
 * (the dangerous-command guard's narrow "always"); `allow-always`: Hermes's "allow permanently" (seed 000).
 */
export type ApprovalAnswer = ApprovalDecision; // recorded as given (approval/answered)

/** T2 step 2: `tools/pre-execute` decides allow, deny, ask or cancel; arguments cannot be rewritten. */
export type PreExecuteDecision =
  | { kind: "allow" }
  | { kind: "deny"; reason: string }
  | {
      kind: "ask";
      reason: string;
      summary: string;
      /** Told the user's answer (the dangerous-command guard records session and permanent approvals). */
      onAnswer?: (answer: ApprovalAnswer) => void | Promise<void>;
      /** Replaces the T16 rejection text (T17 escalation has its own). */
      rejectedText?: string;
    }
  | { kind: "cancel" };

export type PreExecuteState = {
  call: ToolCallRequest;
  tool: AnyToolDefinition | undefined;
  exec: ToolExec;
  decision: PreExecuteDecision;
};

/** T2 step 6: accept, replace or block the output, and add contexts. */
export type PostExecuteState = {
  call: ToolCallRequest;
  tool: AnyToolDefinition;
  exec: ToolExec;
  output: ToolOutput;
  action: "accept" | "replace" | "block";
};

export type ExecuteInput = { call: ToolCallRequest; tool: AnyToolDefinition; exec: ToolExec };

declare module "../hooks/hook-bus.js" {
  interface HookWaterfalls {
    "tools/pre-execute": PreExecuteState;
    "tools/post-execute": PostExecuteState;
  }
  interface HookWrappers {
    "tools/execute": { input: ExecuteInput; output: ToolOutput };
  }
}

export type { HookBus };
