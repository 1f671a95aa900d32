/**
 * The call pipeline (T2, T3, T5, T6, T15, T16): every tool call the model makes goes through `run`.
 *
 *   frozen args → validation → `tools/pre-execute` (allow / deny / ask / cancel) → approval →
 *   `tools/execute` wrappers → body (timeout, abort) → `tools/post-execute` (accept / replace / block,
 *   additional contexts) → finalize → result
 *
 * Validation comes first, before any hook (T2 validates in the body, after the hooks): a call whose
 * arguments are wrong is answered at once and never shown to a person for approval, who would otherwise
 * approve a call that then fails.
 *
 * Invariants:
 * - `run` never throws for a tool fault: unknown tools, bad arguments, denials, throws, timeouts and aborts
 *   are results with `isError: true` and an `Error: …` text; codes stay in `code` (T3). A throwing hook
 *   listener does propagate: that is a harness fault, and the loop ends the turn (L15).
 * - Aborted before the body starts: `Error: tool call aborted before dispatch`. After: the body's signal is
 *   aborted, the pipeline waits for it to settle (bounded by `settleGraceMs`), then answers
 *   `Error: tool call aborted`. A timeout does the same with `Error: tool call timed out after <ms>ms` (T6).
 * - Post-execute sees every outcome of a known tool, including denials (G1 counts denied calls).
 */
import type { HookBus } from "../hooks/hook-bus.js";
import {
  cancelledText,
  noChannelText,
  rejectedText,
  requestApproval,
  reviewerDeniedText,
} from "./approvals.js";
import { argumentsRefusalText } from "./arguments.js";
import { ToolRefusal } from "./refusal.js";
import type { ToolRegistry } from "./registry.js";
import { invalidArgumentsText, validateArguments } from "./schema-validator.js";
import type {
  AnyToolDefinition,
  ConcurrencyClass,
  ExecuteInput,
  PreExecuteDecision,
  ToolCallRequest,
  ToolExec,
  ToolOutput,
} from "./types.js";

export type ToolPipelineOptions = {
  registry: ToolRegistry;
  hooks: HookBus;
  /** Tools the model was offered this turn; others answer `unknown tool`. Default: every registered tool. */
  visible?: () => ReadonlySet<string>;
  /** How long an aborted or timed-out body may take to settle before the pipeline answers anyway. */
  settleGraceMs?: number;
};

export const abortedBeforeDispatch = (): ToolOutput =>
  errorOutput("Error: tool call aborted before dispatch", "ABORTED_BEFORE_DISPATCH");

export class ToolPipeline {
  private readonly registry: ToolRegistry;
  private readonly hooks: HookBus;
  private readonly visible: (() => ReadonlySet<string>) | undefined;
  private readonly settleGraceMs: number;

  constructor(options: ToolPipelineOptions) {
    this.registry = options.registry;
    this.hooks = options.hooks;
    this.visible = options.visible;
    this.settleGraceMs = options.settleGraceMs ?? 5_000;
  }

  /** L19: re-checked by the scheduler just before the call starts. Unknown or throwing: exclusive. */
  concurrencyOf(call: ToolCallRequest): ConcurrencyClass {
    const tool = this.lookup(call.name);
    if (!tool?.concurrency || call.args === undefined) return "exclusive";
    if (typeof tool.concurrency === "string") return tool.concurrency;
    try {
      return tool.concurrency(call.args) === "safe" ? "safe" : "exclusive";
    } catch {
      return "exclusive";
    }
  }

  /** L17: may the call start before the log is flushed? Unknown, unparsed or throwing: no. */
  isReadOnly(call: ToolCallRequest): boolean {
    const tool = this.lookup(call.name);
    if (!tool?.readOnly || call.args === undefined) return false;
    if (typeof tool.readOnly === "boolean") return tool.readOnly;
    try {
      return tool.readOnly(call.args) === true;
    } catch {
      return false;
    }
  }

  async run(call: ToolCallRequest, exec: ToolExec): Promise<ToolOutput> {
    if (exec.signal.aborted) return abortedBeforeDispatch();
    const tool = this.lookup(call.name);
    if (!tool) return errorOutput(`Error: unknown tool "${call.name}"`, "UNKNOWN_TOOL");
    const callExec: ToolExec =
      exec.toolName === tool.name && exec.callId === call.callId
        ? exec
        : { ...exec, toolName: tool.name, callId: call.callId };

    let output = invalidArguments(call, tool);
    if (!output) {
      const pre = await this.hooks.waterfall("tools/pre-execute", {
        call,
        tool,
        exec: callExec,
        decision: { kind: "allow" },
      });
      output = await this.decide(pre.decision, tool, callExec);
    }
    output ??= await this.hooks.wrap("tools/execute", { call, tool, exec: callExec }, (input) =>
      this.execute(input),
    );

    const post = await this.hooks.waterfall("tools/post-execute", {
      call,
      tool,
      exec: callExec,
      output,
      action: "accept",
    });
    return finalize(post.action === "block" ? blocked(post.output, tool.name) : post.output);
  }

  private lookup(name: string): AnyToolDefinition | undefined {
    if (this.visible && !this.visible().has(name)) return undefined;
    return this.registry.get(name);
  }

  /** The pre-execute decision; `undefined` means go on to the body. */
  private async decide(
    decision: PreExecuteDecision,
    tool: AnyToolDefinition,
    exec: ToolExec,
  ): Promise<ToolOutput | undefined> {
    switch (decision.kind) {
      case "allow":
        break;
      case "deny": {
        const reason = decision.reason.startsWith("Error: ") ? decision.reason : `Error: ${decision.reason}`;
        return errorOutput(reason, "TOOL_DENIED");
      }
      case "cancel":
        return errorOutput(cancelledText(tool.name), "APPROVAL_CANCELLED");
      case "ask": {
        const outcome = await requestApproval(exec, { summary: decision.summary, reason: decision.reason });
        if (outcome.kind === "allowed") {
          await decision.onAnswer?.(outcome.answer);
          break;
        }
        if (outcome.answer !== "no-channel") await decision.onAnswer?.(outcome.answer);
        if (outcome.answer === "no-channel")
          return errorOutput(noChannelText(tool.name), "NO_APPROVAL_CHANNEL");
        if (outcome.answer === "cancel") return errorOutput(cancelledText(tool.name), "APPROVAL_CANCELLED");
        if (outcome.reviewerNote !== undefined)
          return errorOutput(reviewerDeniedText(tool.name, outcome.reviewerNote), "APPROVAL_REJECTED");
        return errorOutput(decision.rejectedText ?? rejectedText(tool.name), "APPROVAL_REJECTED");
      }
    }
    if (exec.signal.aborted) return abortedBeforeDispatch();
    return undefined;
  }

  /** The core of `tools/execute`: the body under its timeout and the call's abort signal. */
  private async execute({ call, tool, exec }: ExecuteInput): Promise<ToolOutput> {
    if (exec.signal.aborted) return abortedBeforeDispatch();
    const controller = new AbortController();
    let timedOut = false;
    let interrupt: (() => void) | undefined;
    const interrupted = new Promise<"interrupted">((resolve) => {
      interrupt = () => resolve("interrupted");
    });
    const onAbort = () => {
      controller.abort(exec.signal.reason);
      interrupt?.();
    };
    exec.signal.addEventListener("abort", onAbort, { once: true });
    const timer =
      tool.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            controller.abort(new Error("timeout"));
            interrupt?.();
          }, tool.timeoutMs);
    const body = (async () => tool.execute(call.args, { ...exec, signal: controller.signal }))().then(
      (value): ToolOutput => value,
      (error: unknown): ToolOutput =>
        errorOutput(`Error: ${messageOf(error)}`, error instanceof ToolRefusal ? error.code : "TOOL_THREW"),
    );
    try {
      const first = await Promise.race([body, interrupted]);
      if (first !== "interrupted") return first;
      await this.settle(body);
      if (timedOut) {
        return errorOutput(`Error: tool call timed out after ${tool.timeoutMs}ms`, "TOOL_TIMEOUT");
      }
      return errorOutput("Error: tool call aborted", "ABORTED");
    } finally {
      if (timer) clearTimeout(timer);
      exec.signal.removeEventListener("abort", onAbort);
    }
  }

  private async settle(body: Promise<ToolOutput>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.settleGraceMs);
    });
    await Promise.race([body.then(() => undefined), grace]);
    clearTimeout(timer);
  }
}

export function errorOutput(text: string, code: string): ToolOutput {
  return { text, isError: true, code };
}

/** A blocked result keeps only its contexts: its `details` describe the output that was refused. */
function blocked(output: ToolOutput, name: string): ToolOutput {
  if (output.isError) return output;
  return {
    ...errorOutput(`Error: the result of tool "${name}" was blocked`, "RESULT_BLOCKED"),
    ...pickContexts(output),
  };
}

function pickContexts(output: ToolOutput): Pick<ToolOutput, "additionalContexts"> {
  return output.additionalContexts ? { additionalContexts: output.additionalContexts } : {};
}

/** T3: every error the model sees starts `Error: `. */
function finalize(output: ToolOutput): ToolOutput {
  if (output.isError && !output.text.startsWith("Error: "))
    return { ...output, text: `Error: ${output.text}` };
  return output;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message.replace(/^Error: /, "");
  return String(error);
}

/** T2's argument checks: unparsed arguments, or arguments the tool's schema refuses; `undefined` when valid. */
function invalidArguments(call: ToolCallRequest, tool: AnyToolDefinition): ToolOutput | undefined {
  if (call.args === undefined)
    return errorOutput(argumentsRefusalText(call.rawArguments), "INVALID_ARGUMENTS");
  const violations = validateArguments(tool.parameters, call.args);
  return violations.length > 0
    ? errorOutput(invalidArgumentsText(violations), "INVALID_ARGUMENTS")
    : undefined;
}
