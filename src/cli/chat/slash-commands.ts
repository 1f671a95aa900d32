/**
 * `bdsh chat`'s slash commands (issue 15), shared by the terminal UI and the plain-line fallback.
 *
 * A command either answers with text (`reply`) or acts on the chat through `ChatControl` (switch session,
 * switch model, leave). A line that starts with "/" is never sent to the model: an unknown command is
 * answered with the list, so a typo cannot become a message.
 */
import type { Agent } from "../../loop/agent.js";
import { parseGoalCommand, runGoalCommand } from "../../planning/goal-command.js";
import type { Store } from "../../store/store.js";
import { byLastActivity, findSession, refuseArchived } from "../session-select.js";
import { shortId } from "../short-id.js";

export const SLASH_HELP = [
  "Enter sends; Alt+Enter, Shift+Enter or Ctrl-J adds a line; ↑/↓ recall earlier messages.",
  "While the agent works, a message steers the running turn (its next step). Esc or Ctrl-C interrupts.",
  "/model [<id>]                                   show the model, or use another one from the next turn",
  "/new                                            start a new session in this workspace",
  "/resume [<id>]                                  continue another session (its short id is enough)",
  "/sessions                                       this workspace's sessions",
  "/cost                                           tokens and cost of this session",
  "/compact                                        condense the history now",
  "/goal [<objective>|clear|edit <objective>|pause|resume]   goal rounds",
  "/plan, /default                                 plan mode on or off",
  "/help                                           this list",
  "/exit                                           leave (Ctrl-D on an empty line too)",
].join("\n");

export type ChatControl = {
  /** The open session's agent; `undefined` when none could be opened. */
  agent(): Agent | undefined;
  store: Store;
  workspace: string;
  /** "provider/model". */
  modelName(): string;
  /** Tokens and cost of this session, one line. */
  usageLine(): string;
  switchSession(ref: string | undefined): Promise<string>;
  switchModel(id: string): Promise<string>;
  exit(): void;
};

/**
 * `/new`, `/resume ID` and `/model ID` for both chat front ends: detach the agent and attach again, to
 * another session or the same one with another model (from the next turn). `setModel` changes the config
 * the next attach reads and returns the new "provider/model".
 */
export function sessionSwitching(o: {
  store: Store;
  sessionId(): string | undefined;
  detach(): Promise<void>;
  attach(sessionId: string | undefined): Promise<void>;
  setModel(id: string): string;
}): Pick<ChatControl, "switchSession" | "switchModel"> {
  return {
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
    async switchModel(id) {
      const sessionId = o.sessionId();
      const name = o.setModel(id);
      await o.detach();
      await o.attach(sessionId);
      return `model ${name} from the next turn`;
    },
  };
}

/** Runs `line` if it is a slash command; `undefined` when it is a message for the model. */
export async function runSlashCommand(line: string, chat: ChatControl): Promise<string | undefined> {
  if (!line.startsWith("/")) return undefined;
  const [name = "", ...rest] = line.trim().split(/\s+/);
  const arg = rest.join(" ");
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
    case "/model":
      if (!arg) return `model ${chat.modelName()} (/model <id> switches from the next turn)`;
      if (running) return "The model cannot change while a turn runs; wait or interrupt it.";
      return chat.switchModel(arg);
    case "/new":
      if (running) return "A turn is running; interrupt it (Esc) before starting a new session.";
      return chat.switchSession(undefined);
    case "/resume":
      if (running) return "A turn is running; interrupt it (Esc) before switching sessions.";
      if (!arg) return `${await sessionList(chat)}\nUse /resume <id> (a unique prefix is enough).`;
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
      const compaction = agent.services.get("compaction");
      return compaction
        ? (await compaction.compactNow()).message
        : "Compaction is not available in this preset.";
    }
    case "/plan":
    case "/default": {
      const plan = agent.services.get("planMode");
      if (!plan) return "Plan mode is not available in this preset.";
      await plan.switchTo(name === "/plan" ? "plan" : "default");
      return name === "/plan" ? "Plan mode on." : "Back to the default mode.";
    }
    default:
      break;
  }
  const goal = parseGoalCommand(line);
  if (goal) {
    const goals = agent.services.get("goalService");
    const rounds = agent.services.get("goalRounds");
    if (!goals || !rounds) return "Goals are not available in this preset.";
    return runGoalCommand(goal, {
      goals,
      queueRound: () => rounds.queueRound(),
      commit: () => rounds.commit(),
      kick: () => agent.kick(),
      idle: agent.status === "idle",
    });
  }
  return `Unknown command ${name}; /help lists the commands.`;
}

async function sessionList(chat: ChatControl): Promise<string> {
  const rows = byLastActivity(await chat.store.listSessions({ workspace: chat.workspace, limit: 200 })).slice(
    0,
    20,
  );
  if (rows.length === 0) return `No sessions in ${chat.workspace} yet.`;
  const current = chat.agent()?.sessionId;
  return rows
    .map((row) => {
      const mark = row.id === current ? "*" : " ";
      const when = row.updatedAt.replace("T", " ").slice(0, 16);
      return `${mark} ${shortId(row.id)}  ${when}  ${row.status.padEnd(9)} ${(row.title ?? "(untitled)").slice(0, 60)}`;
    })
    .join("\n");
}
