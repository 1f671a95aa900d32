/**
 * `glob` (T13): files matching a glob pattern, newest first, at most 100 (overflow stored), `No files found`
 * when none. Ignore files (.gitignore, .ignore) are respected, as ripgrep does. Exclusive (L19).
 * Details: the pattern, how many paths matched, and whether the model saw only the first ones.
 */
import { stat } from "node:fs/promises";
import { posix, resolve } from "node:path";
import type { ToolDetails } from "../../log/tool-details.js";
import { type Static, Type, toolParameters } from "../schema.js";
import type { ToolDefinition, ToolExec, ToolOutput } from "../types.js";
import { hiddenReadText, isMasked, maskedRealPaths, shownMaskedDirectories } from "./masked-paths.js";
import { listWithOverflow } from "./overflow.js";
import { remoteFiles, remotePath } from "./remote-files.js";
import { ripgrepAvailable, runRipgrep } from "./ripgrep.js";
import { realPathOf } from "./sandbox-paths.js";

export const GLOB_MAX_PATHS = 100;

export type GlobArgs = Static<typeof GlobSchema>;

const GlobSchema = Type.Object(
  {
    pattern: Type.String({ description: "The glob pattern to match file paths against." }),
    path: Type.Optional(
      Type.String({ description: "Directory to search in. Defaults to the working directory." }),
    ),
  },
  { additionalProperties: false },
);

export const globTool: ToolDefinition<Static<typeof GlobSchema>> = {
  name: "glob",
  toolset: "files",
  description:
    "Find files by glob pattern (for example `**/*.ts` or `src/**/test_*.py`). Returns up to 100 absolute paths, most recently modified first.",
  parameters: toolParameters(GlobSchema),
  // A backend with its own files globs there (no local ripgrep needed).
  isAvailable: ({ services }) => services.get("terminal")?.files !== undefined || ripgrepAvailable(),
  concurrency: "exclusive",
  readOnly: true,
  timeoutMs: 33_000,
  async execute(args, exec): Promise<ToolOutput> {
    const remote = remoteFiles(exec);
    if (remote) {
      const root = remotePath(remote, args.path ?? ".");
      if ((await remote.files.stat(root))?.kind !== "directory")
        throw new Error(`cannot search "${root}": not a directory`);
      const found = await remote.files.glob(root, args.pattern, exec.signal);
      if (found.length === 0) return noFiles(args);
      const dated = found.map((entry) => ({ path: posix.join(root, entry.path), mtime: entry.mtimeMs }));
      return newestFirst(exec, args, dated);
    }
    const root = resolve(exec.cwd, args.path ?? ".");
    const masked = await maskedRealPaths(exec);
    const rootReal = await realPathOf(root);
    // Nothing in the harness's own directory is listed: it holds the trust list and the config (masked-paths.ts).
    if (isMasked(masked, rootReal)) throw new Error(hiddenReadText(root));
    const info = await stat(root).catch(() => undefined);
    if (!info?.isDirectory()) throw new Error(`cannot search "${root}": not a directory`);
    const hidden = shownMaskedDirectories(root, rootReal, masked);
    const result = await runRipgrep(["--files", "--no-messages", "--glob", args.pattern], root, exec.signal);
    if (result.exitCode === 2 && result.stdout.length === 0)
      throw new Error(result.stderr.trim() || "rg failed");
    const relativePaths = result.stdout
      .toString("utf8")
      .split("\n")
      .filter((line) => line !== "" && !isMasked(hidden, resolve(root, line)));
    if (relativePaths.length === 0) return noFiles(args);
    const dated = await Promise.all(
      relativePaths.map(async (relativePath) => {
        const path = resolve(root, relativePath);
        const mtime = await stat(path).then(
          (s) => s.mtimeMs,
          () => 0,
        );
        return { path, mtime };
      }),
    );
    return newestFirst(exec, args, dated);
  },
};

const searchDetails = (args: GlobArgs, matches: number): ToolDetails => ({
  kind: "search",
  pattern: args.pattern,
  matches,
  truncated: matches > GLOB_MAX_PATHS,
});

const noFiles = (args: GlobArgs): ToolOutput => ({ text: "No files found", details: searchDetails(args, 0) });

/** T13: the paths, most recently modified first (ties by path), cut at the limit with the rest spilled. */
async function newestFirst(
  exec: ToolExec,
  args: GlobArgs,
  dated: Array<{ path: string; mtime: number }>,
): Promise<ToolOutput> {
  dated.sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? -1 : 1));
  const paths = dated.map((entry) => entry.path);
  const text = await listWithOverflow(exec, paths, GLOB_MAX_PATHS, "paths");
  return { text, details: searchDetails(args, paths.length) };
}
