/**
 * SP7, T20: skills. A skill is a folder with a `SKILL.md` whose YAML front matter has `name` and
 * `description`; the body is its instructions. Folders come from `$BDSH_HOME/skills` and then
 * `<workspace>/.bdsh/skills` (a project skill replaces a user skill of the same name).
 *
 * - The catalog goes to the model as a durable user-role `<system-reminder>` before the first request, and
 *   again in full whenever it changes (compared with the last catalog in the log). Never in the system
 *   prompt.
 * - Each description is cut to 500 characters; a folder without a readable name is skipped.
 * - The `skill` tool returns the full instructions; it reads the catalog through the `skills` service, so it
 *   sees the same folders the reminder listed.
 * - Accepted content only (SECURITY.md row 1d): a project skill whose `SKILL.md` a person has not accepted
 *   (the gate) is left out of the catalog and the tool, and one `instructions/withheld` event names it.
 *
 * Model experience:
 *   <system-reminder>
 *   Skills are reusable instructions for particular kinds of task. These skills are available here:
 *   <available_skills>
 *   - `name`: description
 *   </available_skills>
 *   When the user names a skill, or the task plainly fits a skill's description, call the `skill` tool with
 *   that exact name before doing the task. Load every skill that applies and follow its full instructions.
 *   This list holds summaries only: do not guess at or act on a skill's instructions before loading it.
 *   A user may also load a skill directly; its <skill_content> block then appears in the conversation.
 *   Follow it, and do not load that skill again with the tool.
 *   </system-reminder>
 * Tool result: `<skill_content name="x">\n<skill_instructions>\n…\n</skill_instructions>\n</skill_content>`.
 */
import { readdirSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import { parse } from "yaml";
import type { InstructionGate } from "../config/instruction-review.js";
import type { Plugin } from "../loop/plugin.js";
import { type Static, Type, toolParameters } from "../tools/schema.js";
import type { ToolDefinition } from "../tools/types.js";
import { derived } from "./file-snapshots.js";
import { reportWithheld, type WithheldFile } from "./instructions.js";
import { latestUserMessageTracker } from "./latest-user-message.js";

export const MAX_DESCRIPTION_CHARS = 500;

export type Skill = { name: string; description: string; instructions: string; path: string };

export interface SkillCatalog {
  list(): Skill[];
  get(name: string): Skill | undefined;
}

declare module "../tools/types.js" {
  interface ToolServiceMap {
    skills: SkillCatalog;
  }
}

export function parseSkill(text: string, path: string): Skill | undefined {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  if (!match) return undefined;
  let meta: unknown;
  try {
    meta = parse(match[1]!);
  } catch {
    return undefined;
  }
  if (typeof meta !== "object" || meta === null) return undefined;
  const { name, description } = meta as Record<string, unknown>;
  if (typeof name !== "string" || name.trim() === "") return undefined;
  const desc = typeof description === "string" ? description.trim().replace(/\s+/g, " ") : "";
  return {
    name: name.trim(),
    description: desc.length > MAX_DESCRIPTION_CHARS ? `${desc.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : desc,
    instructions: match[2]!.trim(),
    path,
  };
}

/**
 * The skill folders, read again only when something in them changed: a check stats the directories and
 * each `SKILL.md` and re-reads and re-parses only when a modification time or size differs. Checks are at
 * most `recheckMs` apart (the loop asks every step) unless the caller asks for a fresh look.
 */
export function skillFolders(
  directories: readonly string[],
  recheckMs = 1_000,
  clock: () => number = Date.now,
  screen?: SkillScreen,
): (options?: { fresh?: boolean }) => Skill[] {
  let signature: string | undefined;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let skills: Skill[] = [];
  return (options = {}) => {
    const now = clock();
    if (!options.fresh && now - checkedAt < recheckMs) return skills;
    checkedAt = now;
    const current = folderSignature(directories);
    if (current !== signature) {
      signature = current;
      skills = loadSkills(directories, screen);
    }
    return skills;
  };
}

function folderSignature(directories: readonly string[]): string {
  const parts: string[] = [];
  for (const directory of directories) {
    const stat = statSync(directory, { throwIfNoEntry: false });
    parts.push(stat ? `${directory}@${stat.mtimeMs}` : `${directory}:none`);
    if (!stat?.isDirectory()) continue;
    let entries: string[];
    try {
      entries = readdirSync(directory);
    } catch {
      continue;
    }
    for (const entry of entries) {
      const file = statSync(join(directory, entry, "SKILL.md"), { throwIfNoEntry: false });
      if (file) parts.push(`${entry}@${file.mtimeMs}:${file.size}`);
    }
  }
  return parts.join("\n");
}

/** Whether a `SKILL.md` with this content may load (row 1d); none: every one may. */
export type SkillScreen = (path: string, content: string) => boolean;

/** Reads the skill folders now; later directories replace earlier skills of the same name. */
export function loadSkills(directories: readonly string[], screen?: SkillScreen): Skill[] {
  const byName = new Map<string, Skill>();
  for (const directory of directories) {
    if (!statSync(directory, { throwIfNoEntry: false })?.isDirectory()) continue; // most homes have none
    let entries: string[];
    try {
      entries = readdirSync(directory).sort();
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(directory, entry, "SKILL.md");
      // Every agent opening reads the same files: parsed again only when one changed (file-snapshots.ts).
      const read = derived(path, "skill", (text) => parseSkill(text, path));
      if (!read) continue;
      if (screen && !screen(path, read.text)) continue;
      if (read.value) byName.set(read.value.name, read.value);
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The skill folders: the user's, then the project's when the workspace is trusted. */
export function skillDirectories(home: string, workspace: string, projectTrusted = true): string[] {
  return projectTrusted ? [join(home, "skills"), join(workspace, ".bdsh", "skills")] : [join(home, "skills")];
}

export function catalogText(skills: readonly Skill[]): string | undefined {
  if (skills.length === 0) return undefined;
  return [
    "<system-reminder>",
    "Skills are reusable instructions for particular kinds of task. These skills are available here:",
    "<available_skills>",
    ...skills.map((s) => `- \`${s.name}\`: ${s.description}`),
    "</available_skills>",
    "When the user names a skill, or the task plainly fits a skill's description, call the `skill` tool with that exact name before doing the task. Load every skill that applies and follow its full instructions. This list holds summaries only: do not guess at or act on a skill's instructions before loading it.",
    "A user may also load a skill directly; its <skill_content> block then appears in the conversation. Follow it, and do not load that skill again with the tool.",
    "</system-reminder>",
  ].join("\n");
}

export function skillContent(skill: Skill): string {
  return `<skill_content name="${skill.name}">\n<skill_instructions>\n${skill.instructions}\n</skill_instructions>\n</skill_content>`;
}

const SkillSchema = Type.Object(
  {
    name: Type.String({ description: "The skill's exact name." }),
  },
  { additionalProperties: false },
);

export const skillTool: ToolDefinition<Static<typeof SkillSchema>> = {
  name: "skill",
  toolset: "skills",
  description:
    "Load a skill's full instructions by its exact name from the available skills list, then follow them.",
  parameters: toolParameters(SkillSchema),
  concurrency: "safe",
  readOnly: true,
  async execute(args, exec) {
    const catalog = exec.services.require("skills");
    const skill = catalog.get(args.name);
    if (!skill) {
      const names = catalog.list().map((s) => s.name);
      throw new Error(
        `no skill named "${args.name}"; available: ${names.length ? names.join(", ") : "(none)"}`,
      );
    }
    return { text: skillContent(skill) };
  },
};

/**
 * Folders are checked before every turn and, within a turn, before a step at most once a second, so a new or
 * edited skill reaches the model (as a full catalog); the `skill` tool always looks afresh.
 */
export function skillsPlugin(options: {
  home: string;
  directories?: readonly string[];
  /** Workspace trust: false leaves out `<workspace>/.bdsh/skills`. Default true. */
  projectTrusted?: boolean;
  /** The directory whose `.bdsh/skills` is the project's (the trusted root); default the workspace. */
  projectRoot?: string;
  /** Row 1d: which project skills a person accepted; none given: all of them. */
  gate?: InstructionGate;
}): Plugin {
  return {
    name: "skills",
    setup(ctx) {
      const projectRoot = options.projectRoot ?? ctx.workspace;
      const directories =
        options.directories ?? skillDirectories(options.home, projectRoot, options.projectTrusted ?? true);
      const projectSkills = join(projectRoot, ".bdsh", "skills") + sep;
      const withheld: WithheldFile[] = [];
      const reported = new Set<string>();
      const { gate } = options;
      // The user's own skills (`$BDSH_HOME/skills`) are out of the sandbox's reach; only the project's wait.
      const screen: SkillScreen | undefined = gate
        ? (path, content) => {
            if (!path.startsWith(projectSkills)) return true;
            const verdict = gate(path, content);
            if (verdict === "accepted") return true;
            withheld.push({ path, kind: "skill", reason: verdict });
            return false;
          }
        : undefined;
      const current = skillFolders(directories, undefined, undefined, screen);
      const lastCatalog = latestUserMessageTracker("skills");
      const catalog: SkillCatalog = {
        list: () => current({ fresh: true }),
        get: (name) => current({ fresh: true }).find((s) => s.name === name),
      };
      ctx.services.set("skills", catalog);
      if (!ctx.tools.registry.has(skillTool.name)) ctx.tools.register(skillTool, { source: "skills" });
      ctx.hooks.onWaterfall(
        "agent/pre-step",
        (state) => {
          const skills = current({ fresh: state.firstStepOfTurn });
          reportWithheld(ctx.log, withheld.splice(0), reported);
          const text = catalogText(skills);
          if (text === undefined) return state;
          if (lastCatalog(ctx.log)?.data.text === text) return state;
          return { ...state, messages: [...state.messages, { text, source: "skills" }] };
        },
        { plugin: "skills" },
      );
    },
  };
}
