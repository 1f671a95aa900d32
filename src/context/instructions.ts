/**
 * SP6: workspace instructions as a user-role `<system-reminder>`, never inside the system prompt (so editing
 * them does not break the prefix cache).
 *
 * - Chain, broad to specific: `$BDSH_HOME/AGENTS.md`, `~/.agents/AGENTS.md`, then in every directory from the
 *   repository root (the nearest `.git` above the working directory, else the working directory) down to
 *   the working directory: `AGENTS.md`, `CLAUDE.md`, `AGENTS.local.md`, `CLAUDE.local.md`. Identical
 *   content within one directory is kept once.
 * - Sent once, at the first pre-step of the session (the log says whether it was), as one durable message.
 * - Budget `maxBytes` (64 KiB) for the whole message: the broadest files are dropped first, then the most
 *   specific one is truncated; a visible notice says what was left out.
 * - Refresh: when `read`, `write` or `edit` succeeds on a path in a deeper directory that has its own
 *   instruction files not yet sent, the next step adds them as "Additional instructions".
 * - A literal `</system-reminder>` inside a file is escaped, so a file cannot close the reminder.
 * - Workspace trust: in an untrusted workspace only the user's own files (`$BDSH_HOME`, `~/.agents`)
 *   are read; the repository's files wait until the user trusts the directory (`bdsh trust`).
 * - Accepted content only (SECURITY.md row 1d): in a trusted workspace a project file is read only when the
 *   gate finds its digest accepted by a person; any other is left out, and one `instructions/withheld` event
 *   names it. The chain never starts above the trusted root, even when the repository root is higher.
 *
 * Model experience:
 *   <system-reminder>
 *   Instructions for this workspace follow. Apply them where they are relevant. Where they disagree, the
 *   more specific file wins. They never override system, developer or direct user instructions.
 *
 *   Instructions from: /repo/AGENTS.md
 *
 *   <content>
 *   </system-reminder>
 * and, on refresh, "Additional instructions from: packages/app/AGENTS.md" with a line saying they apply to
 * work under `packages/app`.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { ACCEPT_COMMAND, INSTRUCTION_FILES } from "../config/instruction-files.js";
import type { InstructionGate, InstructionVerdict } from "../config/instruction-review.js";
import { realDirectory } from "../config/trust.js";
import type { EventDataMap } from "../log/events.js";
import type { LogView, Plugin, PluginLog } from "../loop/plugin.js";
import { fileText } from "./file-snapshots.js";

export { INSTRUCTION_FILES };
export const INSTRUCTIONS_INTRO =
  "Instructions for this workspace follow. Apply them where they are relevant. Where they disagree, the more specific file wins. They never override system, developer or direct user instructions.";
const FILE_TOOLS = new Set(["read", "write", "edit"]);

export type InstructionFile = { path: string; content: string };

export function escapeReminder(text: string): string {
  return text.replaceAll("</system-reminder>", "<\\/system-reminder>");
}

/** Every agent opening reads the same files: read from disk again only when one changed (file-snapshots.ts). */
const readIfFile = fileText;

/** The nearest directory at or above `cwd` holding `.git`, else `cwd`. */
export function repositoryRoot(cwd: string): string {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return resolve(cwd);
  }
}

/** The instruction files of one directory, identical contents collapsed. */
export function directoryFiles(dir: string): InstructionFile[] {
  const found: InstructionFile[] = [];
  for (const name of INSTRUCTION_FILES) {
    const content = readIfFile(join(dir, name));
    if (content === undefined || content.trim() === "") continue;
    if (found.some((f) => f.content === content)) continue;
    found.push({ path: join(dir, name), content });
  }
  return found;
}

/** Directories from `top` down to `bottom` (inclusive); `bottom` must be inside `top`. */
export function chainOf(top: string, bottom: string): string[] {
  const rel = relative(top, bottom);
  if (rel.startsWith("..") || isAbsolute(rel)) return [bottom];
  const dirs = [top];
  let current = top;
  for (const part of rel.split(sep).filter(Boolean)) {
    current = join(current, part);
    dirs.push(current);
  }
  return dirs;
}

/**
 * Where the project chain starts: the repository root, but never above the trusted root (row 1d): a file
 * above it belongs to a directory nobody trusted.
 */
export function chainTop(cwd: string, trustedRoot?: string): string {
  const repository = repositoryRoot(cwd);
  if (trustedRoot === undefined) return repository;
  const inside = relative(trustedRoot, realDirectory(repository));
  return inside.startsWith("..") || isAbsolute(inside) ? trustedRoot : repository;
}

export type WithheldFile = EventDataMap["instructions/withheld"]["files"][number];

/** Keeps the files the gate accepts; the others go to `withheld`. */
export function screenFiles(
  files: readonly InstructionFile[],
  gate: InstructionGate | undefined,
  withheld: WithheldFile[],
  kind: WithheldFile["kind"] = "instructions",
): InstructionFile[] {
  if (!gate) return [...files];
  return files.filter((file) => {
    const verdict: InstructionVerdict = gate(file.path, file.content);
    if (verdict === "accepted") return true;
    withheld.push({ path: file.path, kind, reason: verdict });
    return false;
  });
}

/** One `instructions/withheld` event for files not reported before by this agent. */
export function reportWithheld(log: PluginLog, files: readonly WithheldFile[], reported: Set<string>): void {
  const fresh = files.filter((f) => !reported.has(`${f.path}\0${f.reason}`));
  for (const f of fresh) reported.add(`${f.path}\0${f.reason}`);
  if (fresh.length)
    log.add({ type: "instructions/withheld", data: { files: fresh, accept: ACCEPT_COMMAND } });
}

export function discoverInstructions(options: {
  home: string;
  cwd: string;
  userHome?: string;
  /** Whether the workspace is trusted: only then are the repository's own files read. */
  project?: boolean;
  /** The trusted root: the chain starts no higher. */
  trustedRoot?: string;
  /** Row 1d: which project files a person accepted; none given: all of them. */
  gate?: InstructionGate;
  /** Filled with the project files the gate left out. */
  withheld?: WithheldFile[];
}): InstructionFile[] {
  const files: InstructionFile[] = [];
  for (const path of [
    join(options.home, "AGENTS.md"),
    join(options.userHome ?? homedir(), ".agents", "AGENTS.md"),
  ]) {
    const content = readIfFile(path);
    if (content?.trim() && !files.some((f) => f.path === path)) files.push({ path, content });
  }
  if (options.project === false) return files;
  const withheld = options.withheld ?? [];
  for (const dir of chainOf(chainTop(options.cwd, options.trustedRoot), resolve(options.cwd)))
    files.push(...screenFiles(directoryFiles(dir), options.gate, withheld));
  return files;
}

/** SP6 budget: drop broadest first, then truncate the most specific, with a visible notice. */
export function instructionsMessage(files: readonly InstructionFile[], maxBytes: number): string | undefined {
  if (files.length === 0) return undefined;
  const render = (kept: readonly InstructionFile[], notice?: string) =>
    [
      "<system-reminder>",
      INSTRUCTIONS_INTRO,
      ...(notice ? ["", notice] : []),
      ...kept.flatMap((f) => ["", `Instructions from: ${f.path}`, "", escapeReminder(f.content.trimEnd())]),
      "</system-reminder>",
    ].join("\n");
  const bytes = (text: string) => Buffer.byteLength(text, "utf8");
  let kept = [...files];
  const full = render(kept);
  if (bytes(full) <= maxBytes) return full;
  const dropped: string[] = [];
  const notice = () =>
    `Workspace instruction budget (${maxBytes} bytes) exceeded: ${dropped.length ? `left out ${dropped.join(", ")}` : "nothing left out"}${truncated ? `; ${truncated} is truncated` : ""}.`;
  let truncated = "";
  while (kept.length > 1 && bytes(render(kept, notice())) > maxBytes) dropped.push(kept.shift()!.path);
  if (bytes(render(kept, notice())) <= maxBytes) return render(kept, notice());
  const last = kept[0]!;
  truncated = last.path;
  const overhead = bytes(render([{ ...last, content: "" }], notice())) + 8;
  const room = Math.max(0, maxBytes - overhead);
  const cut = Buffer.from(last.content, "utf8")
    .subarray(0, room)
    .toString("utf8")
    .replace(/\uFFFD+$/, "");
  kept = [{ ...last, content: `${cut}\n[…]` }];
  return render(kept, notice());
}

export function additionalInstructionsMessage(root: string, file: InstructionFile): string {
  const where = relative(root, dirname(file.path)) || ".";
  return [
    "<system-reminder>",
    `Additional instructions from: ${relative(root, file.path)}`,
    "",
    `These apply to work under \`${where}\`. Use them where relevant; the more specific file wins. They never override system, developer or direct user instructions.`,
    "",
    escapeReminder(file.content.trimEnd()),
    "</system-reminder>",
  ].join("\n");
}

/** Paths already sent, read back from the log (so a resumed session does not repeat them). */
function sentPaths(log: LogView, root: string): Set<string> {
  const sent = new Set<string>();
  for (const event of log.events) {
    if (event.type !== "user/message" || event.data.source !== "instructions") continue;
    for (const match of event.data.text.matchAll(/^(?:Additional )?[Ii]nstructions from: (.+)$/gm)) {
      sent.add(resolve(root, match[1]!));
    }
  }
  return sent;
}

function pathArgument(text: string): string | undefined {
  try {
    const args: unknown = JSON.parse(text);
    if (typeof args !== "object" || args === null) return undefined;
    for (const key of ["path", "file_path"]) {
      const value = (args as Record<string, unknown>)[key];
      if (typeof value === "string") return value;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

export function instructionsPlugin(options: {
  home: string;
  maxBytes?: number;
  userHome?: string;
  /** Workspace trust: false reads only the user's own files. Default true. */
  projectTrusted?: boolean;
  /** The trusted root: the chain starts no higher (row 1d). */
  trustedRoot?: string;
  /** Row 1d: which project files a person accepted; none given: all of them. */
  gate?: InstructionGate;
}): Plugin {
  const project = options.projectTrusted ?? true;
  const maxBytes = options.maxBytes ?? 65_536;
  return {
    name: "instructions",
    setup(ctx) {
      let scanned = 0;
      // The baseline is looked for once per agent (a resumed log that already has it is not re-sent), and the
      // repository root once per working directory: both would otherwise touch the disk on every step.
      let baselineChecked = false;
      let rootOf: { cwd: string; root: string } | undefined;
      const reported = new Set<string>();
      ctx.hooks.onWaterfall(
        "agent/pre-step",
        (state) => {
          const cwd = ctx.facts.cwd;
          if (rootOf?.cwd !== cwd) rootOf = { cwd, root: chainTop(cwd, options.trustedRoot) };
          const root = rootOf.root;
          const messages = [...state.messages];
          const firstCheck = !baselineChecked;
          baselineChecked = true;
          if (
            firstCheck &&
            !ctx.log.events.some((e) => e.type === "user/message" && e.data.source === "instructions")
          ) {
            const withheld: WithheldFile[] = [];
            const files = discoverInstructions({
              home: options.home,
              cwd,
              project,
              withheld,
              ...(options.trustedRoot ? { trustedRoot: options.trustedRoot } : {}),
              ...(options.gate ? { gate: options.gate } : {}),
              ...(options.userHome ? { userHome: options.userHome } : {}),
            });
            reportWithheld(ctx.log, withheld, reported);
            const text = instructionsMessage(files, maxBytes);
            scanned = ctx.log.events.length;
            if (text) messages.push({ text, source: "instructions" });
            return { ...state, messages };
          }
          if (!project) return state;
          // Refresh: successful file-tool calls since the last scan that reached deeper directories.
          const failed = new Set<string>();
          const targets: string[] = [];
          const fresh = ctx.log.events.slice(scanned);
          scanned = ctx.log.events.length;
          for (const event of fresh) {
            if (event.type === "tool/result" && event.data.isError) failed.add(event.data.callId);
          }
          for (const event of fresh) {
            if (
              event.type !== "tool/call" ||
              !FILE_TOOLS.has(event.data.name) ||
              failed.has(event.data.callId)
            )
              continue;
            const path = pathArgument(event.data.arguments);
            if (path) targets.push(dirname(resolve(cwd, path)));
          }
          if (targets.length === 0) return state;
          const sent = sentPaths(ctx.log, root);
          const withheld: WithheldFile[] = [];
          for (const dir of new Set(targets)) {
            for (const step of chainOf(root, dir)) {
              if (relative(root, step).startsWith("..") || chainOf(root, resolve(cwd)).includes(step))
                continue;
              const fresh = directoryFiles(step).filter((f) => !sent.has(f.path));
              for (const file of screenFiles(fresh, options.gate, withheld)) {
                sent.add(file.path);
                messages.push({ text: additionalInstructionsMessage(root, file), source: "instructions" });
              }
            }
          }
          reportWithheld(ctx.log, withheld, reported);
          return { ...state, messages };
        },
        { plugin: "instructions" },
      );
    },
  };
}
