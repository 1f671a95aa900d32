/**
 * The subagent plugin (S1–S5, Hermes lifecycle API): the service and tools of every agent, and, in a
 * delegated child, what makes it a child — its prompt additions, its `structured_output`, and the
 * settlement that wakes its parent.
 *
 * Invariants:
 * - S3: a child settles each time it goes idle with nothing queued: a `subagent/settled` event in its own
 *   log (the first is its terminal result), then one message in the parent's durable inbox (source
 *   `subagent-settled`) and a wake of the parent. Through the store, so the parent wakes on whichever
 *   server drives it (on PostgreSQL an inbox row plus NOTIFY). A repaired turn (R1, `interrupted`) settles
 *   too: the parent is told, the work is not re-run.
 * - S4: `structured_output` is refused while the child has active children or undelivered input; once
 *   recorded the turn concludes and every later tool call of the turn is refused with "structured output
 *   already recorded: …". A child that stops without it is nudged by the continuation plugin
 *   (continuation.structured_output) and otherwise settles FAILED.
 * - A parent whose process died while a child ran: when the parent is opened again, children whose turn is
 *   still open with no live driver are woken, so they are repaired (R1) and settle.
 */
import type { Config } from "../config/schema.js";
import type { LogEvent, MessageAbout } from "../log/events.js";
import type { Plugin, PluginContext } from "../loop/plugin.js";
import { CONTEXT_ORDER } from "../loop/prompt.js";
import { opensTurn, type SessionDirectory } from "../store/store.js";
import type { ObjectSchema } from "../tools/types.js";
import { type Delegation, delegationOf } from "./ledger.js";
import type { ChildDriver } from "./lifecycle.js";
import { SubagentService, type SubagentSettings } from "./service.js";
import {
  CLOSING_MESSAGE_HEAD,
  depthCapText,
  diagnosticLine,
  MAX_DIAGNOSTIC_BYTES,
  NO_CLOSING_MESSAGE,
  reportToParentText,
  settlementSummary,
  structuredAlreadyText,
  structuredResultLine,
} from "./texts.js";
import {
  interruptAgentTool,
  listAgentsTool,
  sendMessageTool,
  structuredOutputTool,
  subagentForkTool,
  subagentTool,
} from "./tools.js";

export type SubagentsPluginOptions = { settings: SubagentSettings; driver: ChildDriver };

export function subagentSettingsFrom(config: Config["subagents"]): SubagentSettings {
  return {
    maxDepth: config.max_depth,
    maxActive: config.max_active,
    maxGoalChars: config.max_goal_chars,
    maxContextChars: config.max_context_chars,
    maxMetadataBytes: config.max_metadata_bytes,
    resultRetentionMs: config.result_retention_hours * 3_600_000,
  };
}

export function subagentsPlugin(options: SubagentsPluginOptions): Plugin {
  return {
    name: "subagents",
    needs: ["sessions"], // S1–S5: children to create, read and stop; the parent to report to
    async setup(ctx) {
      const sessions = ctx.capability("sessions");
      const self = await ctx.sessionRecord.read();
      if (!self) return;
      let turnActive = false;
      const service = new SubagentService({
        store: sessions,
        self,
        depth: ctx.session.depth,
        settings: options.settings,
        driver: options.driver,
        cwd: () => ctx.facts.cwd,
        record: (event) => {
          ctx.log.add(event);
        },
        turnActive: () => turnActive,
        toolsets: () => offeredToolsets(ctx),
      });
      ctx.services.set("subagents", service);
      ctx.provide("childWaiter", { waitForChildren: (id) => service.waitForChildren(id) });
      for (const tool of [
        subagentTool,
        subagentForkTool,
        sendMessageTool,
        interruptAgentTool,
        listAgentsTool,
      ])
        ctx.tools.register(tool, { source: "subagents" });

      ctx.hooks.onSerial(
        "agent/status",
        async ({ status }) => {
          turnActive = status === "running";
        },
        { plugin: "subagents" },
      );
      if (!options.driver.findsOrphans)
        ctx.hooks.onSerial("agent/ready", () => wakeOrphanedChildren(service, options.driver), {
          plugin: "subagents",
        });

      const delegation = delegationOf(self);
      if (delegation) setupChild(ctx, sessions, service, delegation, options);
    },
  };
}

/** What a delegated child has beyond any agent: prompt facts, the report tool, settlement. */
function setupChild(
  ctx: PluginContext,
  sessions: SessionDirectory,
  service: SubagentService,
  delegation: Delegation,
  options: SubagentsPluginOptions,
): void {
  const { settings, driver } = options;
  // S1: told how to report, when it can; SP4: the depth cap, only at the cap.
  ctx.prompt.addContext({
    name: "report-to-parent",
    order: CONTEXT_ORDER.delegation + 1,
    render: () =>
      ctx.currentTools().some((t) => t.name === "send_message")
        ? reportToParentText(delegation.parentId)
        : undefined,
  });
  ctx.prompt.addContext({
    name: "delegation-depth",
    order: CONTEXT_ORDER.delegation + 2,
    render: () =>
      service.depth >= settings.maxDepth && offers(ctx, "subagent")
        ? depthCapText(service.depth, settings.maxDepth)
        : undefined,
  });

  if (delegation.schema) {
    // This turn's recorded result: in memory as soon as the call succeeds (a later call of the same batch
    // is refused before the result reaches the log), else from the log (a reopened agent).
    let recordedNow: { turnSeq: number; value: unknown } | undefined;
    const turnSeq = () => ctx.log.last("turn/start")?.seq ?? 0;
    const recorded = (beforeCallId?: string) =>
      recordedNow && recordedNow.turnSeq === turnSeq()
        ? recordedNow.value
        : structuredOfTurn(ctx.log.events, beforeCallId);
    const gate = {
      recorded: () => recorded(),
      busy: async () =>
        (await service.children()).some((child) => child.active) || opensTurn(await ctx.inbox.pending()),
      record: (value: Record<string, unknown>) => {
        recordedNow = { turnSeq: turnSeq(), value };
      },
    };
    ctx.tools.register(structuredOutputTool(delegation.schema as ObjectSchema, gate), {
      source: "subagents",
    });
    // S4: after a recorded result, every later tool call of the turn is refused.
    ctx.hooks.onWaterfall(
      "tools/pre-execute",
      (state) => {
        if (state.call.name === "structured_output") return state; // the tool answers for itself
        const value = recorded(state.call.callId);
        if (value === undefined) return state;
        return { ...state, decision: { kind: "deny", reason: structuredAlreadyText(JSON.stringify(value)) } };
      },
      { plugin: "subagents" },
    );
  }

  ctx.hooks.onSerial(
    "agent/status",
    async ({ status }) => {
      if (status !== "idle") return;
      const end = ctx.log.last("turn/end");
      const previous = ctx.log.last("subagent/settled");
      if (!end || (previous && previous.seq > end.seq)) return;
      if (opensTurn(await ctx.inbox.pending())) return;
      const closingMessage = closingMessageOf(ctx.log.events);
      const structured = delegation.schema ? structuredOfTurn(ctx.log.events) : undefined;
      const error = end.data.error;
      const diagnostic = error
        ? cutBytes(`${error.code}: ${error.message}`, MAX_DIAGNOSTIC_BYTES)
        : undefined;
      ctx.log.add({
        type: "subagent/settled",
        data: {
          childId: ctx.sessionId,
          parentId: delegation.parentId,
          reason: end.data.reason,
          ...(closingMessage === undefined ? {} : { closingMessage }),
          ...(structured === undefined ? {} : { structured }),
          ...(diagnostic === undefined ? {} : { diagnostic }),
        },
      });
      await ctx.log.flush();
      const text = [
        settlementSummary(ctx.sessionId, end.data.reason),
        closingMessage ? `${CLOSING_MESSAGE_HEAD}\n${closingMessage}` : NO_CLOSING_MESSAGE,
        ...(structured === undefined ? [] : [structuredResultLine(JSON.stringify(structured))]),
        ...(diagnostic === undefined ? [] : [diagnosticLine(diagnostic)]),
      ].join("\n\n");
      // S3: a steer starts a new turn of an idle parent and joins the next step of a running one (L4).
      await sessions.enqueueInbox(delegation.parentId, {
        queue: "next-step",
        mode: "steer",
        source: "subagent-settled",
        text,
        metadata: {
          about: {
            kind: "subagent-settled",
            childId: ctx.sessionId,
            reason: end.data.reason,
          } satisfies MessageAbout,
        },
      });
      driver.wake(delegation.parentId);
    },
    { plugin: "subagents" },
  );
}

/** The tools this agent is offered (decided before `agent/ready`; known before the first request is built). */
function offeredTools(ctx: PluginContext): string[] {
  return ctx.tools.declarations().map((t) => t.name);
}

const offers = (ctx: PluginContext, name: string): boolean => offeredTools(ctx).includes(name);

/** The toolsets of the tools this agent is offered. */
function offeredToolsets(ctx: PluginContext): string[] {
  const names = offeredTools(ctx);
  return [
    ...new Set(names.map((name) => ctx.tools.registry.get(name)?.toolset).filter((t): t is string => !!t)),
  ];
}

/** Children whose turn is open with no live driver (their driver died with this parent's process). */
async function wakeOrphanedChildren(service: SubagentService, driver: ChildDriver): Promise<void> {
  for (const child of await service.children()) {
    if (child.state === "RUNNING" || child.state === "CANCEL_REQUESTED" || child.state === "PENDING")
      driver.wake(child.id);
  }
}

/** The text of the last assistant message of the last turn (its closing message), if it wrote any. */
function closingMessageOf(events: readonly LogEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === "turn/start") return undefined;
    if (event.type !== "assistant/message") continue;
    const text = event.data.blocks
      .flatMap((block) => (block.type === "text" ? [block.text] : []))
      .join("")
      .trim();
    if (text) return text;
  }
  return undefined;
}

/** S4: the arguments of this turn's successful `structured_output` call (before `beforeCallId`, if given). */
function structuredOfTurn(events: readonly LogEvent[], beforeCallId?: string): unknown {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === "turn/start") break;
    if (event.type !== "tool/result" || event.data.name !== "structured_output" || event.data.isError)
      continue;
    if (event.data.callId === beforeCallId) continue;
    const call = events.findLast((e) => e.type === "tool/call" && e.data.callId === event.data.callId);
    if (call?.type !== "tool/call") continue;
    try {
      return JSON.parse(call.data.arguments);
    } catch {
      return call.data.arguments;
    }
  }
  return undefined;
}

function cutBytes(text: string, max: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= max) return text;
  return `${bytes
    .subarray(0, max - 3)
    .toString("utf8")
    .replace(/\uFFFD$/, "")}…`;
}
