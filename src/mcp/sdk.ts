/**
 * The MCP SDK's runtime parts, loaded on first use: a process with no MCP server configured (most `bdsh`
 * invocations) never loads it, which saves about 0.2 s of start-up per process.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

export type McpSdk = {
  Client: typeof Client;
  SSEClientTransport: typeof SSEClientTransport;
  StdioClientTransport: typeof StdioClientTransport;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  StreamableHTTPError: typeof StreamableHTTPError;
  ErrorCode: typeof ErrorCode;
  McpError: typeof McpError;
  ToolListChangedNotificationSchema: typeof ToolListChangedNotificationSchema;
};

let loaded: McpSdk | undefined;
let loading: Promise<McpSdk> | undefined;

export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= (async () => {
    const [client, sse, stdio, http, types] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/client/sse.js"),
      import("@modelcontextprotocol/sdk/client/stdio.js"),
      import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
      import("@modelcontextprotocol/sdk/types.js"),
    ]);
    loaded = {
      Client: client.Client,
      SSEClientTransport: sse.SSEClientTransport,
      StdioClientTransport: stdio.StdioClientTransport,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      StreamableHTTPError: http.StreamableHTTPError,
      ErrorCode: types.ErrorCode,
      McpError: types.McpError,
      ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    };
    return loaded;
  })();
  return loading;
}

/** The SDK once loaded (a connection loads it before its first attempt); undefined before. */
export function loadedMcpSdk(): McpSdk | undefined {
  return loaded;
}
