/**
 * MCP tools in an agent's registry (T21, SP8; Hermes tools runtime: "MCP tools are
 * discovered after core tools and register into the same registry").
 *
 * `attachMcpTools(ctx, options)` is the one call the tools plugin makes. It starts (or shares)
 * the pool, waits at most the startup timeouts, and registers each ready server's tools as toolset
 * `mcp:<server>`, named `mcp__<server>__<tool>`. They run through the same `ToolPipeline` as builtin
 * tools: validation by the same schema validator, approvals, the repeat reminder and the spill policy all
 * apply (they are hooks on the agent's bus).
 *
 * Invariants:
 * - SP8: the tool list stays stable. A server that goes down keeps its tools declared; they answer with the
 *   outage. A `tools/list_changed` after the agent is ready appends new tools after the declared ones and
 *   keeps removed ones declared (they answer that the server no longer offers them); the change is
 *   announced by one `developer/message` (toolAdditions / toolRemovals) before the next step, never by
 *   rewriting earlier requests.
 * - `mcp_list_resources` / `mcp_read_resource` are offered when any ready server offers resources; read
 *   results are ordinary outputs, so the spill policy caps them.
 * - A pool made here (no shared pool given) belongs to the agent and is closed on `agent/close`; a shared
 *   pool (`bdsh serve`) is left to its owner.
 * - Nothing a server sends reaches the model, the log or the CLI without the pool's redactor.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServersConfig } from "../config/mcp-servers.js";
import type { Config } from "../config/schema.js";
import type { ImageMediaType, ImageRef } from "../log/messages.js";
import type { Redactor } from "../log/redact.js";
import type { PluginContext } from "../loop/plugin.js";
import { imagesFor } from "../model/catalog.js";
import { Type, toolParameters } from "../tools/schema.js";
import type { AnyToolDefinition, ObjectSchema, ToolOutput } from "../tools/types.js";
import type { McpConnection } from "./connection.js";
import { mcpToolNames, mcpToolset } from "./names.js";
import { McpPool } from "./pool.js";
import { type ImageSink, resultToOutput } from "./results.js";

export const LIST_RESOURCES_TOOL = "mcp_list_resources";
export const READ_RESOURCE_TOOL = "mcp_read_resource";

declare module "../tools/types.js" {
  interface ToolServiceMap {
    /** The MCP servers this agent uses (shared with the process under `bdsh serve`). */
    mcp: McpPool;
  }
}

export type AttachMcpOptions = {
  servers: McpServersConfig;
  env: NodeJS.ProcessEnv;
  /** A process-wide pool (`bdsh serve`); without one the agent makes and closes its own. */
  pool?: McpPool | undefined;
  redactor?: Redactor | undefined;
  /** M10: whether the model takes images, and where images are saved as attachments. */
  images: boolean;
  saveImage?: (name: string, data: Uint8Array, mediaType: ImageMediaType) => ImageRef;
  /** A server that failed to start (reported once per agent-owned pool). */
  onFailure?: (server: string, message: string) => void;
};

/** The MCP tools of one server as registered on one agent. */
type ServerTools = { names: Map<string, string>; removed: Set<string> };

export async function attachMcpTools(ctx: PluginContext, options: AttachMcpOptions): Promise<void> {
  const { registry } = ctx.tools;
  if (!options.pool && Object.keys(options.servers).length === 0) return;
  const owned = !options.pool;
  const pool =
    options.pool ??
    new McpPool(options.servers, {
      env: options.env,
      cwd: ctx.workspace,
      ...(options.redactor ? { redactor: options.redactor } : {}),
      ...(options.onFailure ? { onReport: options.onFailure } : {}),
    });
  await pool.ready();
  ctx.services.set("mcp", pool);
  const sink: ImageSink = {
    images: options.images,
    ...(options.saveImage ? { save: options.saveImage } : {}),
  };

  let ready = false;
  const perServer = new Map<string, ServerTools>();
  const pending = { added: [] as string[], removed: [] as string[] };

  const sync = (connection: McpConnection, tools: readonly Tool[]) => {
    const state = perServer.get(connection.name) ?? { names: new Map(), removed: new Set<string>() };
    perServer.set(connection.name, state);
    const names = mcpToolNames(
      connection.name,
      tools.map((t) => t.name),
      state.names,
    );
    const now = new Set(tools.map((t) => t.name));
    for (const tool of tools) {
      const name = names.get(tool.name)!;
      const known = state.names.has(tool.name);
      const definition = mcpTool(connection, tool, name, state, sink, pool.redactor);
      if (!definition) {
        if (!known)
          options.onFailure?.(
            connection.name,
            `tool "${tool.name}" skipped: its input schema is not an object`,
          );
        continue;
      }
      try {
        registry.register(definition, { allowShadow: known, source: `mcp_servers.${connection.name}` });
      } catch (error) {
        options.onFailure?.(connection.name, `tool "${tool.name}" skipped: ${(error as Error).message}`);
        continue;
      }
      state.names.set(tool.name, name);
      const wasRemoved = state.removed.delete(tool.name);
      if (ready && (!known || wasRemoved)) {
        pending.added.push(name);
        if (!known) ctx.tools.offer([name]);
      }
    }
    for (const [tool, name] of state.names) {
      if (now.has(tool) || state.removed.has(tool)) continue;
      state.removed.add(tool); // SP8: stays declared, answers that it is gone
      if (ready) pending.removed.push(name);
    }
  };

  const unsubscribe: Array<() => void> = [];
  let offersResources = false;
  for (const connection of pool.connections.values()) {
    // A server that is down but was up before keeps its tools declared; they answer with the outage (SP8).
    if (connection.state === "ready" || connection.state === "reconnecting") {
      sync(connection, connection.tools);
      offersResources ||= connection.offersResources;
    }
    unsubscribe.push(
      connection.on((event) => {
        if (event.kind === "tools" && perServer.has(connection.name)) sync(connection, event.tools);
      }),
    );
  }
  if (offersResources) {
    for (const tool of resourceTools(pool)) {
      try {
        registry.register(tool);
      } catch (error) {
        options.onFailure?.("resources", `${tool.name} not offered: ${(error as Error).message}`);
      }
    }
  }

  // SP8: tools added after the agent is ready are offered after the others (the same registry and pipeline:
  // validation, approvals, reminder and spill), and announced before the next step.
  ctx.hooks.onSerial("agent/ready", async () => {
    ready = true;
  });
  ctx.hooks.onWaterfall(
    "agent/pre-step",
    (state) => {
      if (pending.added.length === 0 && pending.removed.length === 0) return state;
      const toolAdditions = [...new Set(pending.added)];
      const toolRemovals = [...new Set(pending.removed)].filter((name) => !toolAdditions.includes(name));
      pending.added = [];
      pending.removed = [];
      ctx.log.add({
        type: "developer/message",
        data: { text: toolChangeText(toolAdditions, toolRemovals), toolAdditions, toolRemovals },
        turn: state.turn,
        step: state.step,
      });
      return state;
    },
    { plugin: "mcp" },
  );
  ctx.hooks.onSerial("agent/close", async () => {
    for (const stop of unsubscribe) stop();
    if (owned) await pool.close();
  });
}

/** The tools plugin's one call (presets/standard-tools.ts): its options, read for what MCP needs. */
export function attachMcpFromConfig(
  ctx: PluginContext,
  options: {
    config: Config;
    env: NodeJS.ProcessEnv;
    /** Where an image a tool returns is saved as an attachment (M10). */
    saveImage: (name: string, data: Uint8Array, mediaType: ImageMediaType) => ImageRef;
    mcp?: McpPool | undefined;
    redactor?: Redactor | undefined;
    onPluginFailure?: ((failure: { name: string; path: string; error: string }) => void) | undefined;
  },
): Promise<void> {
  const { config } = options;
  return attachMcpTools(ctx, {
    servers: config.mcp_servers,
    env: options.env,
    pool: options.mcp,
    redactor: options.redactor,
    images: imagesFor(config.model.provider, config.model.images), // M10
    saveImage: options.saveImage,
    onFailure: (server, error) =>
      options.onPluginFailure?.({ name: `mcp:${server}`, path: `mcp_servers.${server}`, error }),
  });
}

/** SP8: the announcement of a changed tool set (our words; the event carries the names). */
export function toolChangeText(additions: readonly string[], removals: readonly string[]): string {
  const lines = ["The tools available to you have changed."];
  if (additions.length) lines.push(`Now available: ${additions.join(", ")}.`);
  if (removals.length)
    lines.push(`No longer available (calling them returns an error): ${removals.join(", ")}.`);
  return lines.join("\n");
}

function mcpTool(
  connection: McpConnection,
  tool: Tool,
  name: string,
  state: ServerTools,
  sink: ImageSink,
  redactor: Redactor,
): AnyToolDefinition | undefined {
  const parameters = objectSchema(tool.inputSchema);
  if (!parameters) return undefined;
  const description = redactor.text(
    (tool.description ?? tool.title ?? "").trim() ||
      `The "${tool.name}" tool of MCP server "${connection.name}".`,
  );
  return {
    name,
    toolset: mcpToolset(connection.name),
    description,
    parameters,
    // A server's readOnlyHint is its own claim; calls stay exclusive and flushed first (fail-closed, L17, L19).
    timeoutMs: connection.config.timeout_ms, // T21: 60 s per call by default
    async execute(args: Record<string, unknown>, exec): Promise<ToolOutput> {
      if (state.removed.has(tool.name)) {
        throw new Error(`MCP server "${connection.name}" no longer offers the tool "${tool.name}".`);
      }
      // The pipeline's timeout aborts the signal first; the SDK then sends notifications/cancelled.
      const result = await connection.callTool(tool.name, args, {
        signal: exec.signal,
        timeoutMs: connection.config.timeout_ms + 1_000,
      });
      return {
        ...resultToOutput(name, result, sink, redactor),
        details: { kind: "mcp", server: connection.name, tool: tool.name },
      };
    },
  };
}

/** The server's input schema as an object schema for the registry; undefined when it is not one. */
function objectSchema(schema: Tool["inputSchema"]): ObjectSchema | undefined {
  if (schema?.type !== "object") return undefined;
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  return { ...rest, type: "object", properties: (schema.properties ?? {}) as ObjectSchema["properties"] };
}

const McpListResourcesSchema = Type.Object(
  {
    server: Type.Optional(Type.String({ description: "An MCP server's name; default: every server." })),
  },
  { additionalProperties: false },
);

const McpReadResourceSchema = Type.Object(
  {
    server: Type.String({ description: "The MCP server's name." }),
    uri: Type.String({ description: "The resource URI." }),
  },
  { additionalProperties: false },
);

export function resourceTools(pool: McpPool): AnyToolDefinition[] {
  const servers = () => [...pool.connections.values()].filter((c) => c.offersResources);
  const list: AnyToolDefinition = {
    name: LIST_RESOURCES_TOOL,
    toolset: "mcp",
    description:
      "List the resources (and resource templates) that connected MCP servers offer. Give `server` to list one server's only. Read one with mcp_read_resource.",
    parameters: toolParameters(McpListResourcesSchema),
    concurrency: "safe",
    readOnly: true,
    async execute(args: { server?: string }) {
      const chosen = args.server
        ? [pool.connections.get(args.server)].filter((c): c is McpConnection => c !== undefined)
        : servers();
      if (args.server && chosen.length === 0) throw new Error(unknownServer(pool, args.server));
      const sections: string[] = [];
      for (const connection of chosen) {
        if (connection.state !== "ready") {
          sections.push(`## ${connection.name}\n${connection.outageText()}`);
          continue;
        }
        if (!connection.offersResources) continue;
        let listed: Awaited<ReturnType<McpConnection["listResources"]>>;
        try {
          listed = await connection.listResources();
        } catch (error) {
          sections.push(`## ${connection.name}\nError: ${(error as Error).message}`);
          continue;
        }
        const { resources, templates } = listed;
        const lines = resources.map(
          (r) =>
            `- ${r.uri}${r.name ? ` (${r.name}${r.mimeType ? `, ${r.mimeType}` : ""})` : ""}${r.description ? `: ${r.description}` : ""}`,
        );
        for (const t of templates)
          lines.push(
            `- template ${t.uriTemplate}${t.name ? ` (${t.name})` : ""}${t.description ? `: ${t.description}` : ""}`,
          );
        sections.push(`## ${connection.name}\n${lines.length ? lines.join("\n") : "(no resources)"}`);
      }
      return { text: pool.redactor.text(sections.join("\n\n") || "(no MCP server offers resources)") };
    },
  };
  const read: AnyToolDefinition = {
    name: READ_RESOURCE_TOOL,
    toolset: "mcp",
    description:
      "Read one resource from an MCP server by its URI (as mcp_list_resources lists it). Text is returned as is; binary content is described, not inlined.",
    parameters: toolParameters(McpReadResourceSchema),
    concurrency: "safe",
    readOnly: true,
    async execute(args: { server: string; uri: string }, exec) {
      const connection = pool.connections.get(args.server);
      if (!connection) throw new Error(unknownServer(pool, args.server));
      const result = await connection.readResource(args.uri, exec.signal);
      const parts = result.contents.map((content) => {
        if ("text" in content && typeof content.text === "string")
          return result.contents.length > 1 ? `[${content.uri}]\n${content.text}` : content.text;
        const bytes =
          "blob" in content && typeof content.blob === "string"
            ? Buffer.from(content.blob, "base64").byteLength
            : 0;
        return `[${content.uri}: ${content.mimeType ?? "binary"}, ${bytes} bytes of binary content, not shown]`;
      });
      const text = pool.redactor.text(parts.join("\n\n"));
      return { text: text || `(${READ_RESOURCE_TOOL} returned no model-visible content)` };
    },
  };
  return [list, read];
}

function unknownServer(pool: McpPool, server: string): string {
  const names = [...pool.connections.keys()];
  return `no MCP server named "${server}"; configured: ${names.length ? names.join(", ") : "none"}`;
}
