/**
 * `bdsh chat`'s slash commands, shared by the terminal UI and the plain-line fallback.
 *
 * A command either answers with text (`reply`) or acts on the chat through `ChatControl` (switch session,
 * switch model, leave). A line that starts with "/" is never sent to the model: an unknown command is
 * answered with the list, so a typo cannot become a message.
 */
import type { Config } from "../../config/schema.js";
import { isProviderName, PRESETS } from "../../model/catalog.js";
import { knownModels } from "../../model/pricing.js";
import { EFFORTS, type Effort } from "../../model/types.js";
import { parseGoalCommand } from "../../planning/goal-command.js";
import { FeatureMissingError, type StandardAgent } from "../../presets/standard-agent.js";
import type { SessionRow, Store } from "../../store/store.js";
import { resumableSessions, sessionLine } from "../session-picker.js";
import { findSession, refuseArchived } from "../session-select.js";
import { shortId } from "../short-id.js";

/** One slash command: its name, the argument it takes, one line of help. */
export type SlashCommand = { name: string; args?: string; help: string; aliases?: readonly string[] };

/**
 * Every slash command, once: the menu that opens on "/", Tab's completion, `/help` and the plain-line
 * fallback all read this table.
 */
export const SLASH_COMMANDS: readonly SlashCommand[] = [
  {
    name: "/model",
    args: "[<id> [<effort>]]",
    help: "pick a model (and effort), or switch to <id> from the next turn",
  },
  {
    name: "/resume",
    args: "[<id>]",
    help: "continue another session of this workspace (pick one, or its short id)",
  },
  { name: "/new", help: "start a new session in this workspace" },
  { name: "/sessions", help: "this workspace's sessions, last active first" },
  { name: "/cost", help: "tokens and cost of this session" },
  { name: "/compact", help: "condense the history now" },
  { name: "/goal", args: "[<objective>|clear|edit <objective>|pause|resume]", help: "goal rounds" },
  { name: "/plan", help: "plan mode on: the agent is asked to research and plan before it changes anything" },
  { name: "/default", help: "plan mode off" },
  { name: "/help", help: "the keys and these commands", aliases: ["/?"] },
  { name: "/exit", help: "leave (Ctrl-D on an empty line too)", aliases: ["/quit"] },
];

const usageOf = (command: SlashCommand) => (command.args ? `${command.name} ${command.args}` : command.name);

export const SLASH_HELP = [
  "Enter sends; Alt+Enter, Shift+Enter or Ctrl-J adds a line; ↑/↓ recall earlier messages.",
  "While the agent works, a message steers the running turn (its next step). Esc or Ctrl-C interrupts.",
  "Type / for the commands (↑/↓ move, Enter runs, Tab completes, Esc closes):",
  ...SLASH_COMMANDS.map((command) => `${usageOf(command).padEnd(48)} ${command.help}`),
].join("\n");

/**
 * The commands the menu offers for the editor's `text`: while it is a "/" and a word (no space, one line),
 * those whose name starts with it; `undefined` when the text is not a command being typed.
 */
export function commandsMatching(text: string): SlashCommand[] | undefined {
  if (!/^\/\S*$/.test(text)) return undefined;
  const typed = text.toLowerCase();
  return SLASH_COMMANDS.filter((command) => command.name.startsWith(typed));
}

/**
 * Tab on `text`: the one matching command's name and a space, or the longest prefix several share when it
 * is longer than what was typed; `undefined` when there is nothing to add.
 */
export function completeCommand(text: string): string | undefined {
  const matches = commandsMatching(text);
  if (!matches || matches.length === 0) return undefined;
  if (matches.length === 1) return `${(matches[0] as SlashCommand).name} `;
  const names = matches.map((command) => command.name);
  let common = names[0] as string;
  for (const name of names) while (!name.startsWith(common)) common = common.slice(0, -1);
  return common.length > text.length ? common : undefined;
}

/** A choice the terminal UI offers in a list (↑/↓, Enter; Esc closes it). */
export type PickerItem = { label: string; detail?: string };

export type Picker = {
  title: string;
  items: readonly PickerItem[];
  /** The row selected when it opens (the current model, the current effort). */
  selected: number;
  /** The row taken: what to say, as a command's reply would (`undefined`: nothing, e.g. another picker opened). */
  choose(index: number): Promise<string | undefined>;
};

/** The model a chat uses: the config's `model` section, as far as `/model` reads and changes it. */
export type ChatModel = { provider: string; id: string; effort: Effort };

export type ChatControl = {
  /** The open session's agent; `undefined` when none could be opened. */
  agent(): StandardAgent | undefined;
  store: Store;
  workspace: string;
  model(): ChatModel;
  /** Tokens and cost of this session, one line. */
  usageLine(): string;
  switchSession(ref: string | undefined): Promise<string>;
  switchModel(id: string, effort?: Effort): Promise<string>;
  /** Opens a picker (the terminal UI); absent in the plain-line fallback, which lists instead. */
  pick?(picker: Picker): void;
  exit(): void;
};

const modelName = (model: ChatModel) => `${model.provider}/${model.id}`;

/**
 * `/new`, `/resume ID` and `/model ID [EFFORT]` for both chat front ends: detach the agent and attach again,
 * to another session or the same one with another model (from the next turn).
 */
export function sessionSwitching(o: {
  store: Store;
  sessionId(): string | undefined;
  detach(): Promise<void>;
  attach(sessionId: string | undefined): Promise<void>;
  /** The config the next attach reads, and how to change it (`effortChosen`: the person picked the effort,
   * so it wins over the one the session's log last used, as `--effort` does). */
  config(): Config;
  setConfig(config: Config, effortChosen: boolean): void;
}): Pick<ChatControl, "switchSession" | "switchModel" | "model"> {
  return {
    model: () => o.config().model,
    async switchSession(ref) {
      let id: string | undefined;
      if (ref !== undefined) {
        const row = await findSession(o.store, ref);
        refuseArchived(row);
        id = row.id;
      }
      await o.detach();
      await o.attach(id);
      return id ? `continuing session ${shortId(id)}` : "new session";
    },
    async switchModel(id, effort) {
      const sessionId = o.sessionId();
      const config = o.config();
      const model = { ...config.model, id, ...(effort ? { effort } : {}) };
      o.setConfig({ ...config, model }, effort !== undefined);
      await o.detach();
      await o.attach(sessionId);
      return `model ${modelName(model)}${effort ? ` (effort ${effort})` : ""} from the next turn`;
    },
  };
}

/** The effort levels `provider` takes (none where its endpoint decides alone). */
export function effortLevels(provider: string): readonly Effort[] {
  return isProviderName(provider) && PRESETS[provider].reasoning.kind !== "none" ? EFFORTS : [];
}

/** `/model` without an id: the provider's models, then (where the provider has them) the effort levels. */
function modelPicker(chat: ChatControl): Picker {
  const current = chat.model();
  const ids = [...new Set([...knownModels(current.provider), current.id])];
  return {
    title: `model for ${current.provider} (now ${current.id}, effort ${current.effort})`,
    items: ids.map((id) => ({ label: id, ...(id === current.id ? { detail: "current" } : {}) })),
    selected: ids.indexOf(current.id),
    async choose(index) {
      const id = ids[index] as string;
      const levels = effortLevels(current.provider);
      if (levels.length === 0 || !chat.pick) return chat.switchModel(id);
      chat.pick({
        title: `effort for ${id}`,
        items: levels.map((level) => ({
          label: level,
          ...(level === current.effort ? { detail: "current" } : {}),
        })),
        selected: Math.max(0, levels.indexOf(current.effort)),
        choose: (at) => chat.switchModel(id, levels[at]),
      });
      return undefined;
    },
  };
}

/** `/resume` without an id: this workspace's sessions, last active first. */
async function sessionPicker(chat: ChatControl): Promise<Picker | string> {
  const rows = await resumableSessions(chat.store, chat.workspace);
  if (rows.length === 0) return `No sessions in ${chat.workspace} yet.`;
  const current = chat.agent()?.sessionId;
  return {
    title: "resume which session? (last active first)",
    items: rows.map((row) => ({
      label: sessionLine(row),
      ...(row.id === current ? { detail: "open now" } : {}),
    })),
    selected: 0,
    choose: (index) => chat.switchSession((rows[index] as SessionRow).id),
  };
}

/** Runs `line` if it is a slash command; `undefined` when it is a message for the model. */
export async function runSlashCommand(line: string, chat: ChatControl): Promise<string | undefined> {
  if (!line.startsWith("/")) return undefined;
  const [name = "", ...rest] = line.trim().split(/\s+/);
  const arg = rest.join(" ");
  const known = SLASH_COMMANDS.some((command) => command.name === name || command.aliases?.includes(name));
  if (!known) return `unknown command ${name} — /help lists the commands`;
  const agent = chat.agent();
  const running = agent?.status === "running";
  switch (name) {
    case "/help":
    case "/?":
      return SLASH_HELP;
    case "/exit":
    case "/quit":
      chat.exit();
      return "";
    case "/model": {
      if (running) return "The model cannot change while a turn runs; wait or interrupt it.";
      const model = chat.model();
      if (!arg) {
        if (chat.pick) {
          chat.pick(modelPicker(chat));
          return "";
        }
        const known = knownModels(model.provider);
        return [
          `model ${modelName(model)}, effort ${model.effort} (/model <id> [<effort>] switches from the next turn)`,
          ...(known.length ? [`known models: ${known.join(", ")}`] : []),
          ...(effortLevels(model.provider).length ? [`effort levels: ${EFFORTS.join(", ")}`] : []),
        ].join("\n");
      }
      const [id = "", effort, ...extra] = arg.split(/\s+/);
      if (extra.length > 0 || (effort !== undefined && !(EFFORTS as readonly string[]).includes(effort)))
        return `usage: /model <id> [<effort>]; effort is one of ${EFFORTS.join(", ")}`;
      return chat.switchModel(id, effort as Effort | undefined);
    }
    case "/new":
      if (running) return "A turn is running; interrupt it (Esc) before starting a new session.";
      return chat.switchSession(undefined);
    case "/resume":
      if (running) return "A turn is running; interrupt it (Esc) before switching sessions.";
      if (!arg) {
        if (!chat.pick) return `${await sessionList(chat)}\nUse /resume <id> (a unique prefix is enough).`;
        const picker = await sessionPicker(chat);
        if (typeof picker === "string") return picker;
        chat.pick(picker);
        return "";
      }
      return chat.switchSession(arg);
    case "/sessions":
      return sessionList(chat);
    case "/cost":
      return chat.usageLine();
    default:
      break;
  }
  if (!agent) return "No session is open; /new opens one, /resume <id> continues one.";
  switch (name) {
    case "/compact": {
      if (agent.status === "running") return "Compaction is unavailable while the agent is running.";
      return withFeature(async () => (await agent.compactNow()).message);
    }
    case "/plan":
    case "/default": {
      const plan = agent.planMode;
      if (!plan) return "Plan mode is not available in this preset.";
      await plan.switchTo(name === "/plan" ? "plan" : "default");
      return name === "/plan" ? "Plan mode on." : "Back to the default mode.";
    }
    default:
      break;
  }
  const goal = parseGoalCommand(line);
  if (goal) {
    return withFeature(() => agent.goalCommand(goal, () => agent.kick()));
  }
  return `unknown command ${name} — /help lists the commands`; // not reached: the table lists every name
}

/** An operation this preset's agent lacks (no compaction, no goals) answers in words, not as an error. */
async function withFeature(run: () => Promise<string>): Promise<string> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof FeatureMissingError)
      return error.code === "NO_GOALS"
        ? "Goals are not available in this preset."
        : "Compaction is not available in this preset.";
    throw error;
  }
}

async function sessionList(chat: ChatControl): Promise<string> {
  const rows = await resumableSessions(chat.store, chat.workspace);
  if (rows.length === 0) return `No sessions in ${chat.workspace} yet.`;
  const current = chat.agent()?.sessionId;
  return rows.map((row) => `${row.id === current ? "*" : " "} ${sessionLine(row)}`).join("\n");
}
