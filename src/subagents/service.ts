/**
 * The subagent service of one agent (S1, S5, Hermes lifecycle API): launching children, messages between
 * a parent and its children, interrupts, listing, waiting for children (P4 step 1, L16), and the
 * handle-based lifecycle operations for plugins (`ctx.services.require("subagents")`).
 *
 * Invariants:
 * - A child is a session in the store with `parentId` and a `delegation` record: spawn (kind `subagent`,
 *   fresh history) or fork (kind `fork`, the parent's events up to its last `turn/end`). Its task arrives
 *   through its durable inbox, so any process or server may drive it.
 * - S1 limits: an agent at `max_depth` cannot launch; at most `max_active` children are active per session
 *   tree, counted from the store plus the launches in flight here; at capacity the launch fails with
 *   ACTIVATION_LIMIT_REACHED (no queue).
 * - A child inherits the parent's workspace, sandbox, model and effort (the same configuration); its
 *   approval is pinned to `never` by its depth (loop/agent.ts).
 * - Messages (S5) go only between a parent and its own children; anything else is refused without saying
 *   whether the other session exists.
 * - Lifecycle requests fail closed: no launch outside an active turn ("No active parent session"); capped
 *   goal, context and metadata; unknown or broadening toolsets, per-tool blocks, working-directory
 *   overrides and per-launch timeouts are refused by name.
 */
import type { NewEvent } from "../log/events.js";
import { forkSession } from "../loop/fork.js";
import { beginSession } from "../loop/new-session.js";
import { traced } from "../loop/trace-carrier.js";
import type { SessionDirectory, SessionRow } from "../store/store.js";
import { ToolRefusal } from "../tools/refusal.js";
import type { SubagentHandle } from "./handles.js";
import { type ChildView, childrenOf, childView, type Delegation, REPORT_TOOLSET } from "./ledger.js";
import {
  type ChildDriver,
  changeOf,
  type ResultAnswer,
  requestChildCancel,
  type StatusAnswer,
  SubagentLifecycle,
  type WaitAnswer,
} from "./lifecycle.js";
import {
  ACTIVATION_LIMIT_CODE,
  activationLimitText,
  agentMessageText,
  depthLimitText,
  NO_ACTIVE_PARENT,
  notYourAgentText,
} from "./texts.js";

export type SubagentSettings = {
  maxDepth: number;
  maxActive: number;
  maxGoalChars: number;
  maxContextChars: number;
  maxMetadataBytes: number;
  resultRetentionMs: number;
};

export type LaunchRequest = {
  goal: string;
  context?: string;
  role?: string;
  correlationId?: string;
  allowedToolsets?: string[];
  metadata?: Record<string, unknown>;
  /** S4: the child reports through `structured_output` with arguments matching this JSON schema. */
  schema?: Record<string, unknown>;
};

/** A launch refused: `code` for programs, `message` for people and models. */
export class SubagentRefusal extends ToolRefusal {
  override name = "SubagentRefusal";
}

export type SubagentServiceOptions = {
  store: SessionDirectory;
  /** This agent's session row (its parent and delegation record, if it is a child). */
  self: SessionRow;
  depth: number;
  settings: SubagentSettings;
  driver: ChildDriver;
  /** The working directory children start in. */
  cwd: () => string;
  /** Adds an event to this agent's log (only while one of its hooks or tools runs). */
  record: (event: NewEvent) => void;
  /** Whether a turn of this agent is running (the lifecycle API launches only then). */
  turnActive: () => boolean;
  /** The toolsets this agent is offered (a child may be narrowed to some of them, never widened). */
  toolsets: () => readonly string[];
};

const REQUEST_KEYS = new Set([
  "goal",
  "context",
  "role",
  "correlationId",
  "allowedToolsets",
  "metadata",
  "schema",
]);
/** Hermes: refused explicitly until they can be supported without weakening isolation. */
const REFUSED_KEYS: Record<string, string> = {
  blockedTools: "per-tool blocks are not supported; narrow the child with allowedToolsets",
  toolBlocks: "per-tool blocks are not supported; narrow the child with allowedToolsets",
  cwd: "a working-directory override is not supported; a child starts in its parent's directory",
  workingDirectory: "a working-directory override is not supported; a child starts in its parent's directory",
  timeout: "a per-launch timeout is not supported; cancel the child instead",
  timeoutMs: "a per-launch timeout is not supported; cancel the child instead",
};

export class SubagentService {
  readonly lifecycle: SubagentLifecycle;
  /** Launches run one at a time (parallel tool calls): the store's count of active children is then exact. */
  private launches: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: SubagentServiceOptions) {
    this.lifecycle = new SubagentLifecycle(options.store, options.driver, {
      resultRetentionMs: options.settings.resultRetentionMs,
    });
  }

  get sessionId(): string {
    return this.options.self.id;
  }

  get parentId(): string | null {
    return this.options.self.parentId;
  }

  get depth(): number {
    return this.options.depth;
  }

  get settings(): SubagentSettings {
    return this.options.settings;
  }

  /** S1: whether this agent may launch children at all. */
  get canDelegate(): boolean {
    return this.options.depth < this.options.settings.maxDepth;
  }

  /** S2: starts a child and returns its id at once. */
  async start(
    mode: "spawn" | "fork",
    task: string,
    extra: Omit<Delegation, "parentId" | "depth" | "mode" | "task" | "via"> & {
      via?: Delegation["via"];
    } = {},
  ): Promise<string> {
    const { settings } = this.options;
    if (!this.canDelegate)
      throw new SubagentRefusal("DEPTH_LIMIT_REACHED", depthLimitText(this.options.depth, settings.maxDepth));
    const launch = this.launches.then(() => this.launchNow(mode, task, extra));
    this.launches = launch.catch(() => undefined);
    return launch;
  }

  private async launchNow(
    mode: "spawn" | "fork",
    task: string,
    extra: Omit<Delegation, "parentId" | "depth" | "mode" | "task" | "via"> & { via?: Delegation["via"] },
  ): Promise<string> {
    const { store, self, settings } = this.options;
    if ((await this.activeInTree()) >= settings.maxActive)
      throw new SubagentRefusal(ACTIVATION_LIMIT_CODE, activationLimitText(settings.maxActive));
    const delegation: Delegation = {
      parentId: self.id,
      depth: this.options.depth + 1,
      mode,
      task: task.length > 2_000 ? `${task.slice(0, 2_000)}…` : task,
      via: extra.via ?? "tool",
      ...withoutVia(extra),
    };
    const workspace = (self.metadata.workspace as string | undefined) ?? this.options.cwd();
    const child =
      mode === "fork"
        ? await forkSession(store, self.id, { title: null, metadata: { workspace, delegation } })
        : await this.spawnSession(workspace, delegation);
    // S1: the child's turns continue this call's trace (the row carries its context).
    await store.enqueueInbox(
      child.id,
      traced({ queue: "next-turn", mode: "followup", source: "delegation", text: task }),
    );
    this.options.record({
      type: "subagent/started",
      data: { childId: child.id, mode, task: delegation.task },
    });
    this.options.driver.wake(child.id);
    return child.id;
  }

  /** S5: a message to this agent's parent or one of its children; wakes the receiver. */
  async send(targetId: string, message: string): Promise<void> {
    if (!(await this.inReach(targetId)))
      throw new SubagentRefusal("UNKNOWN_AGENT", notYourAgentText(targetId));
    await this.options.store.enqueueInbox(
      targetId,
      traced({
        queue: "next-step",
        mode: "steer",
        source: "agent-message",
        text: agentMessageText(this.sessionId, message),
      }),
    );
    this.options.driver.wake(targetId);
  }

  /** S5 `interrupt_agent`: stops one of this agent's children (it settles as stopped). */
  async interrupt(childId: string, reason = "interrupted by its parent"): Promise<ChildView> {
    const view = await this.ownChild(childId);
    if (!view) throw new SubagentRefusal("UNKNOWN_AGENT", notYourAgentText(childId));
    if (view.active) await requestChildCancel(this.options.store, this.options.driver, childId, reason);
    return view;
  }

  /** This agent's children, oldest first, with their states. */
  async children(): Promise<ChildView[]> {
    const rows = await childrenOf(this.options.store, this.sessionId);
    const views = await Promise.all(rows.map((row) => childView(this.options.store, row.id)));
    return views.filter((v): v is ChildView => v !== undefined);
  }

  /**
   * P4 step 1, L16: waits until none of this agent's children is active (running, or with input waiting).
   * True when there was anything to wait for.
   */
  async waitForChildren(sessionId = this.sessionId): Promise<boolean> {
    let waited = false;
    for (;;) {
      const rows = await childrenOf(this.options.store, sessionId);
      const views = await Promise.all(rows.map((row) => childView(this.options.store, row.id)));
      const busy = views.filter((v) => v?.active);
      if (busy.length === 0) return waited;
      waited = true;
      await Promise.race(busy.map((v) => changeOf(this.options.store, v!.id, 1_000)));
    }
  }

  // ---- the lifecycle API (Hermes) ----

  /** Launches a fresh child for a plugin; the handle is serializable and only this parent can use it. */
  async launch(request: LaunchRequest): Promise<SubagentHandle> {
    if (!this.options.turnActive()) throw new SubagentRefusal("NO_ACTIVE_PARENT", NO_ACTIVE_PARENT);
    const checked = this.checkRequest(request);
    const task = checked.context ? `${checked.goal}\n\nContext:\n${checked.context}` : checked.goal;
    const childId = await this.start("spawn", task, {
      via: "api",
      ...(checked.role === undefined ? {} : { role: checked.role }),
      ...(checked.correlationId === undefined ? {} : { correlationId: checked.correlationId }),
      ...(checked.allowedToolsets === undefined
        ? {}
        : {
            // S4: a narrowed child that must report keeps its report tool (not a toolset of the parent's).
            allowedToolsets: checked.schema
              ? [...checked.allowedToolsets, REPORT_TOOLSET]
              : checked.allowedToolsets,
          }),
      ...(checked.metadata === undefined ? {} : { metadata: checked.metadata }),
      ...(checked.schema === undefined ? {} : { schema: checked.schema }),
    });
    return this.lifecycle.issue(childId, this.sessionId, checked.correlationId);
  }

  status(handle: unknown): Promise<StatusAnswer> {
    return this.lifecycle.status(handle, this.sessionId);
  }

  wait(handle: unknown, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<WaitAnswer> {
    return this.lifecycle.wait(handle, options, this.sessionId);
  }

  cancel(handle: unknown, options: { reason?: string } = {}): Promise<StatusAnswer> {
    return this.lifecycle.cancel(handle, options, this.sessionId);
  }

  result(handle: unknown): Promise<ResultAnswer> {
    return this.lifecycle.result(handle, this.sessionId);
  }

  reconnect(handle: unknown) {
    return this.lifecycle.reconnect(handle, this.sessionId);
  }

  // ---- internals ----

  private async spawnSession(workspace: string, delegation: Delegation): Promise<SessionRow> {
    const { store } = this.options;
    const firstLine = delegation.task.split("\n", 1)[0] ?? "";
    return beginSession(
      store,
      {
        parentId: this.sessionId,
        kind: "subagent",
        title: firstLine.length > 80 ? `${firstLine.slice(0, 79)}…` : firstLine || null,
        metadata: { workspace, delegation },
      },
      { cwd: this.options.cwd() },
    );
  }

  /** Active children in this session tree (S1: the limit is per tree, from its root). */
  private async activeInTree(): Promise<number> {
    const { store } = this.options;
    let root = this.options.self;
    for (let hops = 0; root.parentId && hops < 16; hops++) {
      const up = await store.getSession(root.parentId);
      if (!up) break;
      root = up;
    }
    let active = 0;
    const queue = [root.id];
    while (queue.length) {
      const id = queue.shift() as string;
      for (const row of await childrenOf(store, id)) {
        if ((await childView(store, row.id))?.active) active++;
        queue.push(row.id);
      }
    }
    return active;
  }

  private async ownChild(id: string): Promise<ChildView | undefined> {
    const view = await childView(this.options.store, id);
    return view?.parentId === this.sessionId ? view : undefined;
  }

  private async inReach(id: string): Promise<boolean> {
    if (id === this.parentId) return true;
    return (await this.ownChild(id)) !== undefined;
  }

  private checkRequest(request: LaunchRequest): LaunchRequest {
    const { settings } = this.options;
    if (typeof request !== "object" || request === null)
      throw new SubagentRefusal("INVALID_REQUEST", "a launch request is an object");
    for (const key of Object.keys(request)) {
      const refused = REFUSED_KEYS[key];
      if (refused) throw new SubagentRefusal("UNSUPPORTED", `${key}: ${refused}`);
      if (!REQUEST_KEYS.has(key))
        throw new SubagentRefusal("INVALID_REQUEST", `unknown launch request key "${key}"`);
    }
    if (typeof request.goal !== "string" || request.goal.trim() === "")
      throw new SubagentRefusal("INVALID_REQUEST", "goal must be a non-empty string");
    if (request.goal.length > settings.maxGoalChars)
      throw new SubagentRefusal(
        "TOO_LARGE",
        `goal is ${request.goal.length} characters; the limit is ${settings.maxGoalChars}`,
      );
    if (request.context !== undefined) {
      if (typeof request.context !== "string")
        throw new SubagentRefusal("INVALID_REQUEST", "context must be a string");
      if (request.context.length > settings.maxContextChars)
        throw new SubagentRefusal(
          "TOO_LARGE",
          `context is ${request.context.length} characters; the limit is ${settings.maxContextChars}`,
        );
    }
    for (const key of ["role", "correlationId"] as const) {
      const value = request[key];
      if (value !== undefined && (typeof value !== "string" || value.length > 200))
        throw new SubagentRefusal("INVALID_REQUEST", `${key} must be a string of at most 200 characters`);
    }
    if (request.role !== undefined && request.role !== "leaf")
      throw new SubagentRefusal(
        "UNSUPPORTED",
        `role "${request.role}": a child cannot delegate further, so its role is "leaf"`,
      );
    if (request.metadata !== undefined) {
      if (
        typeof request.metadata !== "object" ||
        request.metadata === null ||
        Array.isArray(request.metadata)
      )
        throw new SubagentRefusal("INVALID_REQUEST", "metadata must be an object");
      const bytes = Buffer.byteLength(jsonOf(request.metadata, "metadata"));
      if (bytes > settings.maxMetadataBytes)
        throw new SubagentRefusal(
          "TOO_LARGE",
          `metadata is ${bytes} bytes as JSON; the limit is ${settings.maxMetadataBytes}`,
        );
    }
    if (request.allowedToolsets !== undefined) {
      if (
        !Array.isArray(request.allowedToolsets) ||
        request.allowedToolsets.some((t) => typeof t !== "string")
      )
        throw new SubagentRefusal("INVALID_REQUEST", "allowedToolsets must be an array of toolset names");
      const mine = new Set(this.options.toolsets());
      for (const name of request.allowedToolsets)
        if (!mine.has(name))
          throw new SubagentRefusal(
            "TOOLSET_NOT_ALLOWED",
            `toolset "${name}" is unknown or not offered to the parent; a child can only be narrowed`,
          );
    }
    if (request.schema !== undefined) {
      const schema = request.schema as { type?: unknown };
      if (typeof schema !== "object" || schema === null || schema.type !== "object")
        throw new SubagentRefusal(
          "INVALID_REQUEST",
          'schema must be a JSON schema object with type "object"',
        );
    }
    return request;
  }
}

/** The JSON text of a request field; a value JSON cannot carry (a cycle, a BigInt) is refused by name. */
function jsonOf(value: unknown, field: string): string {
  try {
    return JSON.stringify(value);
  } catch {
    throw new SubagentRefusal("INVALID_REQUEST", `${field} must be plain JSON (no cycles, no BigInt values)`);
  }
}

function withoutVia<T extends { via?: unknown }>(value: T): Omit<T, "via"> {
  const { via: _via, ...rest } = value;
  return rest;
}
