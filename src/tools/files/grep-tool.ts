/**
 * `grep` (T13, C16): ripgrep over files, or a regular-expression search inside a `spill://` locator.
 *
 * Output lines are `<path>:<line>:<text>`, sorted by path then line, at most 250 (overflow stored, T13's
 * notice), each cut at 2000 bytes. `No matches found` when none. 30 s (+3 s) timeout (T6). Exclusive (L19).
 * Details: the pattern, how many matching lines in how many files, and whether the model saw only some.
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import type { ToolDetails } from "../../log/tool-details.js";
import { type Static, Type, toolParameters } from "../schema.js";
import { parseSpillLocator } from "../spill/blob-store.js";
import type { ToolDefinition, ToolExec, ToolOutput } from "../types.js";
import { hiddenReadText, isMasked, maskedRealPaths, shownMaskedDirectories } from "./masked-paths.js";
import { listWithOverflow } from "./overflow.js";
import { remoteFiles, remotePath } from "./remote-files.js";
import { ripgrepAvailable, runRipgrep } from "./ripgrep.js";
import { realPathOf } from "./sandbox-paths.js";

export const GREP_MAX_MATCHES = 250;
export const GREP_MAX_LINE_BYTES = 2000;

export type GrepArgs = Static<typeof GrepSchema>;

const GrepSchema = Type.Object(
  {
    pattern: Type.String({ description: "The regular expression to search for." }),
    path: Type.Optional(
      Type.String({ description: "File, directory or spill:// locator. Defaults to the working directory." }),
    ),
    glob: Type.Optional(
      Type.String({ description: "Only search files whose path matches this glob (for example `*.ts`)." }),
    ),
    ignore_case: Type.Optional(Type.Boolean({ description: "Case-insensitive search. Defaults to false." })),
  },
  { additionalProperties: false },
);

export const grepTool: ToolDefinition<Static<typeof GrepSchema>> = {
  name: "grep",
  toolset: "files",
  description:
    "Search file contents with a regular expression (ripgrep syntax). Returns up to 250 matching lines as `path:line:text`. `path` may be a directory, a file, or a spill:// locator of a stored result.",
  parameters: toolParameters(GrepSchema),
  // A backend with its own files greps there (no local ripgrep needed).
  isAvailable: ({ services }) => services.get("terminal")?.files !== undefined || ripgrepAvailable(),
  concurrency: "exclusive",
  readOnly: true,
  timeoutMs: 33_000,
  execute: (args, exec) => grep(args, exec),
};

type Match = { path: string; line: number; text: string };

async function grep(args: GrepArgs, exec: ToolExec): Promise<ToolOutput> {
  const blobId = args.path === undefined ? undefined : parseSpillLocator(args.path);
  const matches = blobId !== undefined ? await grepBlob(exec, args, blobId) : await grepFiles(exec, args);
  const details: ToolDetails = {
    kind: "search",
    pattern: args.pattern,
    matches: matches.length,
    files: new Set(matches.map((match) => match.path)).size,
    truncated: matches.length > GREP_MAX_MATCHES,
  };
  if (matches.length === 0) return { text: "No matches found", details };
  const lines = matches.map((match) => cutLine(`${match.path}:${match.line}:${match.text}`));
  return { text: await listWithOverflow(exec, lines, GREP_MAX_MATCHES, "matches"), details };
}

async function grepFiles(exec: ToolExec, args: GrepArgs): Promise<Match[]> {
  const remote = remoteFiles(exec);
  if (remote) {
    const target = remotePath(remote, args.path ?? ".");
    if (!(await remote.files.stat(target))) throw new Error(`cannot search "${target}": not found`);
    const lines = await remote.files.grep(target, args.pattern, {
      ...(args.glob ? { glob: args.glob } : {}),
      ...(args.ignore_case ? { ignoreCase: true } : {}),
      signal: exec.signal,
    });
    const parsed = lines.map((line) => {
      const match = /^(.*?):(\d+):(.*)$/s.exec(line);
      return match
        ? { path: match[1]!, line: Number(match[2]), text: match[3]! }
        : { path: line, line: 0, text: "" };
    });
    return byPathThenLine(parsed);
  }
  const target = resolve(exec.cwd, args.path ?? ".");
  const masked = await maskedRealPaths(exec);
  const targetReal = await realPathOf(target);
  // Nothing in the harness's own directory is searched or shown: it holds the trust list (masked-paths.ts).
  if (isMasked(masked, targetReal)) throw new Error(hiddenReadText(target));
  if (!(await stat(target).catch(() => undefined))) throw new Error(`cannot search "${target}": not found`);
  const hidden = shownMaskedDirectories(target, targetReal, masked);
  const rgArgs = [
    "--line-number",
    "--no-heading",
    "--with-filename",
    "--null",
    "--color",
    "never",
    "--no-messages",
  ];
  if (args.ignore_case) rgArgs.push("--ignore-case");
  if (args.glob) rgArgs.push("--glob", args.glob);
  rgArgs.push("--regexp", args.pattern, "--", target);
  const result = await runRipgrep(rgArgs, exec.cwd, exec.signal);
  if (result.exitCode === 2 && result.stdout.length === 0)
    throw new Error(result.stderr.trim() || "rg failed");
  const matches: Match[] = [];
  for (const record of result.stdout.toString("utf8").split("\n")) {
    const nul = record.indexOf("\0");
    if (nul < 0) continue;
    const rest = record.slice(nul + 1);
    const colon = rest.indexOf(":");
    if (isMasked(hidden, resolve(exec.cwd, record.slice(0, nul)))) continue;
    matches.push({
      path: record.slice(0, nul),
      line: Number(rest.slice(0, colon)),
      text: rest.slice(colon + 1),
    });
  }
  return byPathThenLine(matches);
}

function byPathThenLine(matches: Match[]): Match[] {
  return matches.sort((a, b) => (a.path === b.path ? a.line - b.line : a.path < b.path ? -1 : 1));
}

async function grepBlob(exec: ToolExec, args: GrepArgs, blobId: string): Promise<Match[]> {
  const blob = await exec.services.get("blobs")?.getBlob(blobId);
  if (!blob) throw new Error(`cannot search "${args.path}": not found`);
  let pattern: RegExp;
  try {
    pattern = new RegExp(args.pattern, args.ignore_case ? "i" : "");
  } catch (error) {
    throw new Error(`invalid pattern: ${error instanceof Error ? error.message : String(error)}`);
  }
  const out: Match[] = [];
  const path = args.path ?? "";
  blob.content
    .toString("utf8")
    .split("\n")
    .forEach((text, index) => {
      if (pattern.test(text)) out.push({ path, line: index + 1, text });
    });
  return out;
}

function cutLine(line: string): string {
  if (Buffer.byteLength(line) <= GREP_MAX_LINE_BYTES) return line;
  const cut = Buffer.from(line)
    .subarray(0, GREP_MAX_LINE_BYTES)
    .toString("utf8")
    .replace(/\uFFFD$/, "");
  return `${cut}… (line truncated to ${GREP_MAX_LINE_BYTES} bytes)`;
}
