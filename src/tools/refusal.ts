/**
 * A refusal a tool body throws (T2, T3): the pipeline answers it like any throw, `Error: <message>`, but
 * keeps the refusal's own `code` in the result's metadata instead of `TOOL_THREW`. Services (goals,
 * subagents) throw their own subclass, so their callers outside a tool (commands, the HTTP API) read the
 * same code and message.
 */
export class ToolRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ToolRefusal";
  }
}
