/**
 * The subagent tools (S2, S4, S5, T22): `subagent`, `subagent_fork`, `send_message`, `interrupt_agent`,
 * `list_agents`, and a child's `structured_output` (made per child, from the schema it was launched with).
 * There is no wait tool (S5): the parent is notified when a child settles (S3).
 *
 * Model-visible strings: ./texts.ts. Details (`subagent`): the agent a launch, message or interrupt is about.
 */
import { canonicalJson } from "../tools/arguments.js";
import { AnyObject, type Static, Type, toolParameters } from "../tools/schema.js";
import type { ObjectSchema, ToolDefinition, ToolExec } from "../tools/types.js";
import { type ChildView, REPORT_TOOLSET } from "./ledger.js";
import { SubagentRefusal, type SubagentService } from "./service.js";
import {
  INTERRUPT_AGENT_DESCRIPTION,
  LAUNCH_SUFFIX,
  LIST_AGENTS_DESCRIPTION,
  SEND_MESSAGE_DESCRIPTION,
  STRUCTURED_BUSY_TEXT,
  STRUCTURED_OUTPUT_DESCRIPTION,
  STRUCTURED_OUTPUT_SECTION,
  SUBAGENT_DESCRIPTION,
  SUBAGENT_FORK_DESCRIPTION,
  startedText,
  structuredAlreadyText,
} from "./texts.js";

declare module "../tools/types.js" {
  interface ToolServiceMap {
    /** S1–S5 and the lifecycle API of this agent. */
    subagents: SubagentService;
  }
}

export const SUBAGENT_TOOLSET = "subagents";

const MAX_SCHEMA_CHARS = 16_384;
const MAX_SCHEMA_DEPTH = 16;

function depthOf(value: unknown, depth = 0): number {
  if (depth > MAX_SCHEMA_DEPTH || typeof value !== "object" || value === null) return depth;
  let deepest = depth;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child, depth + 1));
  return deepest;
}

const serviceOf = (exec: ToolExec): SubagentService => exec.services.require("subagents");

const canLaunch: ToolDefinition["isAvailable"] = ({ services, session }) => {
  const service = services.get("subagents");
  return service !== undefined && session.depth < service.settings.maxDepth;
};

const hasService: ToolDefinition["isAvailable"] = ({ services }) => services.get("subagents") !== undefined;

const TASK = Type.String({
  minLength: 1,
  description: "The task, self-contained: what to do, where, and what to report back.",
});

const SubagentSchema = Type.Object(
  {
    task: TASK,
    output_schema: Type.Optional(
      AnyObject({
        description:
          'Optional JSON schema (type "object") the subagent must report its result in, through its structured_output tool.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const subagentTool: ToolDefinition<Static<typeof SubagentSchema>> = {
  name: "subagent",
  toolset: SUBAGENT_TOOLSET,
  description: SUBAGENT_DESCRIPTION + LAUNCH_SUFFIX,
  parameters: toolParameters(SubagentSchema),
  isAvailable: canLaunch,
  concurrency: "safe", // S2: launches may run side by side
  async execute(args, exec) {
    const schema = args.output_schema;
    if (schema !== undefined && schema.type !== "object")
      throw new SubagentRefusal("INVALID_REQUEST", 'output_schema must have type "object"');
    // The model writes the schema: keep it small and shallow enough for the validator to walk.
    if (
      schema !== undefined &&
      (JSON.stringify(schema).length > MAX_SCHEMA_CHARS || depthOf(schema) > MAX_SCHEMA_DEPTH)
    )
      throw new SubagentRefusal(
        "INVALID_REQUEST",
        `output_schema must be at most ${MAX_SCHEMA_CHARS} characters of JSON and ${MAX_SCHEMA_DEPTH} levels deep`,
      );
    const id = await serviceOf(exec).start("spawn", args.task, schema ? { schema } : {});
    return {
      text: startedText(id),
      metadata: { childId: id },
      details: { kind: "subagent", childId: id, mode: "spawn" },
    };
  },
};

const SubagentForkSchema = Type.Object(
  {
    task: TASK,
  },
  { additionalProperties: false },
);

export const subagentForkTool: ToolDefinition<Static<typeof SubagentForkSchema>> = {
  name: "subagent_fork",
  toolset: SUBAGENT_TOOLSET,
  description: SUBAGENT_FORK_DESCRIPTION + LAUNCH_SUFFIX,
  parameters: toolParameters(SubagentForkSchema),
  isAvailable: canLaunch,
  concurrency: "safe",
  async execute(args, exec) {
    const id = await serviceOf(exec).start("fork", args.task);
    return {
      text: startedText(id),
      metadata: { childId: id },
      details: { kind: "subagent", childId: id, mode: "fork" },
    };
  },
};

const SendMessageSchema = Type.Object(
  {
    agent_id: Type.String({ minLength: 1, description: "Your parent's id, or one of your subagents' ids." }),
    message: Type.String({ minLength: 1, description: "The message, self-contained." }),
  },
  { additionalProperties: false },
);

export const sendMessageTool: ToolDefinition<Static<typeof SendMessageSchema>> = {
  name: "send_message",
  toolset: SUBAGENT_TOOLSET,
  description: SEND_MESSAGE_DESCRIPTION,
  parameters: toolParameters(SendMessageSchema),
  isAvailable: hasService,
  concurrency: "safe",
  async execute(args, exec) {
    await serviceOf(exec).send(args.agent_id, args.message);
    return {
      text: `message delivered to agent ${args.agent_id}`,
      details: { kind: "subagent", childId: args.agent_id },
    };
  },
};

const InterruptAgentSchema = Type.Object(
  {
    agent_id: Type.String({ minLength: 1, description: "The id of one of your subagents." }),
  },
  { additionalProperties: false },
);

export const interruptAgentTool: ToolDefinition<Static<typeof InterruptAgentSchema>> = {
  name: "interrupt_agent",
  toolset: SUBAGENT_TOOLSET,
  description: INTERRUPT_AGENT_DESCRIPTION,
  parameters: toolParameters(InterruptAgentSchema),
  isAvailable: hasService,
  concurrency: "safe",
  async execute(args, exec) {
    const view = await serviceOf(exec).interrupt(args.agent_id);
    return {
      text: view.active
        ? `asked subagent ${view.id} to stop; you will be notified when it settles`
        : `subagent ${view.id} is not running (${view.state.toLowerCase()}); nothing to interrupt`,
      details: { kind: "subagent", childId: view.id },
    };
  },
};

const ListAgentsSchema = Type.Object({}, { additionalProperties: false });

export const listAgentsTool: ToolDefinition<Static<typeof ListAgentsSchema>> = {
  name: "list_agents",
  toolset: SUBAGENT_TOOLSET,
  description: LIST_AGENTS_DESCRIPTION,
  parameters: toolParameters(ListAgentsSchema),
  isAvailable: hasService,
  concurrency: "safe",
  readOnly: true,
  async execute(_args, exec) {
    const children = await serviceOf(exec).children();
    if (children.length === 0) return { text: "No subagents" };
    return {
      text: `${children.map(agentLine).join("\n")}\nYou are notified when a subagent finishes; there is no need to check its status again.`,
    };
  },
};

function agentLine(view: ChildView): string {
  const state = view.active && view.settled ? "RUNNING (again)" : view.state;
  const task = view.task.replace(/\s+/g, " ");
  return `${view.id} [${view.mode}] ${state} — ${task.length > 100 ? `${task.slice(0, 99)}…` : task}`;
}

/** S4: the report tool of a child launched with a schema; `record` keeps the result for the settlement. */
export function structuredOutputTool(
  schema: ObjectSchema,
  gate: {
    recorded(): unknown;
    busy(): Promise<boolean>;
    record(value: Record<string, unknown>): void;
  },
): ToolDefinition<Record<string, unknown>> {
  return {
    name: "structured_output",
    toolset: REPORT_TOOLSET,
    description: STRUCTURED_OUTPUT_DESCRIPTION,
    parameters: schema,
    promptSection: { order: 2_810, text: STRUCTURED_OUTPUT_SECTION },
    async execute(args, exec) {
      const already = gate.recorded();
      if (already !== undefined)
        return {
          text: `Error: ${structuredAlreadyText(canonicalJson(already))}`,
          isError: true,
          code: "ALREADY_RECORDED",
        };
      if (await gate.busy()) return { text: `Error: ${STRUCTURED_BUSY_TEXT}`, isError: true, code: "BUSY" };
      gate.record(args);
      exec.concludeTurn(); // S4: success concludes the turn
      return { text: "structured output recorded" };
    },
  };
}
