/**
 * A tool call in plain words for every view (the terminal's tool cards, the dashboard's): its arguments as an
 * object and one line saying what it did, from the `details` the tool recorded. Browser-safe (no Node
 * imports). Arguments and details come from the model's actions: any shape is accepted.
 */
import type { ToolDetails } from "../log/tool-details.js";

export type Args = Record<string, unknown>;

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A call's arguments as an object (model output: anything else is `{}`). */
export function parseArgs(text: string): Args {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Args) : {};
  } catch {
    return {};
  }
}

/** One line saying what the call did, from its details. */
export function detailSummary(details: ToolDetails): string {
  switch (details.kind) {
    case "read": {
      const { startLine, endLine, totalLines } = details;
      if (endLine < startLine) return `no lines (${plural(totalLines, "line")} in all)`;
      if (startLine === 1 && endLine === totalLines) return plural(totalLines, "line");
      return `lines ${startLine}-${endLine} of ${totalLines}`;
    }
    case "search": {
      // grep counts matching lines in files; glob counts paths.
      const found =
        details.files === undefined
          ? plural(details.matches, "path")
          : `${plural(details.matches, "match", "matches")} in ${plural(details.files, "file")}`;
      return `${found}${details.truncated ? " (the first ones shown)" : ""}`;
    }
    case "image":
      return `${details.mimeType}, ${plural(details.bytes, "byte")}`;
    case "subagent":
      return `${details.mode === undefined ? "agent" : details.mode === "fork" ? "fork" : "subagent"} ${details.childId}`;
    case "mcp":
      return `MCP ${details.server} · ${details.tool}`;
    case "fetch":
      return `${details.status} · ${plural(details.bytes, "byte")}${details.truncated ? " (cut)" : ""}`;
    case "web-search":
      return plural(details.results.length, "result");
    case "files":
      return details.files.map((file) => file.path).join(", ");
    case "job":
      return `job ${details.jobId}${details.status ? ` ${details.status}` : ""}${details.exitCode === undefined ? "" : ` (exit ${details.exitCode})`}`;
    case "command":
    case "file-change":
    case "todos":
      return "";
  }
}
