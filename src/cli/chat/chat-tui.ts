/**
 * `bdsh chat` in a terminal: the controller between the keyboard, the agent and the screen.
 * What a key does is decided by chat-input.ts (a reducer over the editor, the menu and the footer, and the
 * modals' bindings); this module carries out its effects (send, interrupt, leave) and owns the agent.
 *
 * Invariants:
 * - stdin is read in raw mode by one reader (this module) with bracketed paste on; nothing else opens a
 *   reader on it (the old readline approval prompt did, and its answer went to the model). Approvals and
 *   questions are modals on the screen: while one is open, keys answer it and nothing else.
 * - Enter sends the editor's text: idle, as a follow-up (a new turn); while a turn runs, as a steer
 *   (L4: delivered at the next step), acknowledged on screen. A line starting with "/" is a command and is
 *   never sent (slash-commands.ts).
 * - Esc or Ctrl-C while a turn runs interrupts it (L7): the screen stops drawing the stream at once, the
 *   agent is cancelled, the delivered prefix stays in the log. Idle, Ctrl-C clears the editor, and on an
 *   empty editor asks for a second Ctrl-C; Ctrl-D on an empty editor leaves, as does /exit.
 * - Errors are shown in the transcript with what to do (chat-screen.ts `errorHint`), never swallowed:
 *   a failed open, a turn that ended with a provider error, a failed send.
 * - Leaving restores the terminal (raw mode off, bracketed paste off, Ink unmounted), waits for the agent
 *   to close, and never leaves a turn running.
 */
import { PassThrough } from "node:stream";
import { render } from "ink";
import { createElement } from "react";
import type { Config } from "../../config/schema.js";
import { priceFromConfig } from "../../model/pricing.js";
import { SetupError } from "../../presets/setup-error.js";
import type { StandardAgent } from "../../presets/standard-agent.js";
import type { Store } from "../../store/store.js";
import type { Approvals } from "../../tools/approvals.js";
import type { QuestionAnswerer } from "../../tools/interaction/ask-user-tool.js";
import { colorEnabled, palette } from "../render/style.js";
import { shortId } from "../short-id.js";
import { ChatApp } from "./chat-app.js";
import { EMPTY_INPUT, type InputState, inputReducer, modalAction } from "./chat-input.js";
import { screenApprovals, screenQuestions } from "./chat-modals.js";
import { ChatScreen, type PickerModal } from "./chat-screen.js";
import { InputHistory } from "./history.js";
import { type Key, KeyDecoder, PASTE_OFF, PASTE_ON } from "./keys.js";
import { type ChatControl, type Picker, runSlashCommand, sessionSwitching } from "./slash-commands.js";

const HINT = "Enter send · Alt+Enter new line · ↑ history · Esc interrupt · /help · Ctrl-D leave";

export type OpenChatAgent = (options: {
  sessionId?: string;
  config: Config;
  /** The effort was picked in this chat (`/model ID EFFORT`): it wins over the session's last one. */
  effortExplicit?: boolean;
  approvals: Approvals;
  questions: QuestionAnswerer;
}) => Promise<StandardAgent>;

export type ChatTuiOptions = {
  store: Store;
  config: Config;
  workspace: string;
  sessionId?: string;
  /** Sent as the first message once the session is open (`bdsh chat "task"`). */
  firstMessage?: string;
  historyFile?: string;
  env: NodeJS.ProcessEnv;
  open: OpenChatAgent;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
};

export async function runChatTui(options: ChatTuiOptions): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const p = palette(colorEnabled(stdout, options.env));
  let config = options.config;
  let effortChosen = false;
  const screen = new ChatScreen(p, stdout.columns || 80, () => priceFromConfig(config.model));
  const history = new InputHistory(options.historyFile);
  let agent: StandardAgent | undefined;
  /** The session whose conversation the screen shows. */
  let shownSession: string | undefined;
  let detach: (() => void) | undefined;
  let leave: () => void = () => undefined;
  const left = new Promise<void>((resolve) => {
    leave = resolve;
  });

  const approvals = screenApprovals(screen);
  const questions = screenQuestions(screen);

  async function attach(sessionId: string | undefined): Promise<void> {
    const next = await options.open({
      ...(sessionId ? { sessionId } : {}),
      config,
      ...(effortChosen ? { effortExplicit: true } : {}),
      approvals,
      questions,
    });
    // The header first, then the conversation: a reopened session (`--continue`, `/resume`) is replayed
    // from its log through the same projection as a live one; the same session again (`/model`) keeps what
    // is on screen and adds only what is new (the projection takes each seq once).
    const same = next.sessionId === shownSession;
    if (!same) screen.switchSession();
    shownSession = next.sessionId;
    screen.note(
      `session ${shortId(next.sessionId)} · model ${config.model.provider}/${config.model.id} · /help for commands`,
    );
    const offDurable = next.log.onDurable((events) => screen.events(events));
    const offDelta = next.onDelta((delta) => screen.delta(delta.type, delta.delta));
    detach = () => {
      offDurable();
      offDelta();
    };
    agent = next;
    if (sessionId) {
      await next.log.load();
      screen.events(next.log.events);
    }
    // R1: an interrupted turn is closed honestly on open; a failure is shown, not swallowed.
    next.open().catch((error: unknown) => showError(error));
  }

  async function detachAgent(): Promise<void> {
    const old = agent;
    if (!old) return;
    detach?.();
    agent = undefined;
    await old.close();
  }

  function showError(error: unknown): void {
    const code =
      error && typeof error === "object" && "code" in error && typeof error.code === "string"
        ? error.code
        : "ERROR";
    // A setup error (no key, unknown provider) names what to set; the provider's hints would contradict it
    // ("the provider refused the API key" when none was sent).
    screen.error(
      code,
      error instanceof Error ? error.message : String(error),
      !(error instanceof SetupError),
    );
  }

  const control: ChatControl = {
    agent: () => agent,
    store: options.store,
    workspace: options.workspace,
    usageLine: () => screen.usageLine(),
    ...sessionSwitching({
      store: options.store,
      sessionId: () => agent?.sessionId,
      detach: detachAgent,
      attach,
      config: () => config,
      setConfig: (next, chosen) => {
        config = next;
        effortChosen ||= chosen;
      },
    }),
    pick: (picker) => openPicker(picker),
    exit: () => leave(),
  };

  /** A picker as a modal: the row taken runs its choice, whose reply is noted like a command's. */
  function openPicker(picker: Picker): void {
    if (picker.items.length === 0) {
      screen.note(`${picker.title}: nothing to choose from`);
      return;
    }
    const modal: PickerModal = {
      kind: "picker",
      title: picker.title,
      items: picker.items,
      selected: Math.min(Math.max(0, picker.selected), picker.items.length - 1),
      answer: (index) => {
        if (screen.modal === modal) screen.closeModal();
        if (index === undefined) return;
        picker
          .choose(index)
          .then((reply) => {
            if (reply) screen.note(reply);
          })
          .catch(showError);
      },
    };
    screen.openModal(modal);
  }

  async function submit(text: string): Promise<void> {
    history.add(text);
    const trimmed = text.trim();
    if (trimmed === "") return;
    if (trimmed.startsWith("/")) {
      screen.commit(p.cyan(`› ${trimmed}`));
      try {
        const reply = await runSlashCommand(trimmed, control);
        if (reply) screen.note(reply);
        const plan = agent?.planMode;
        if (plan) screen.setPlanMode(plan.mode === "plan"); // `/plan` and `/default` take effect at once
      } catch (error) {
        showError(error);
      }
      return;
    }
    const a = agent;
    if (!a) return screen.note("No session is open; /new opens one, /resume <id> continues one.");
    try {
      if (a.status === "running" || screen.status.running) {
        screen.userMessage(text, true);
        await a.steer(text);
      } else {
        screen.userMessage(text, false);
        screen.turnStarted();
        await a.followup(text);
      }
    } catch (error) {
      showError(error);
    }
  }

  function interrupt(): void {
    if (!screen.status.running) return;
    screen.interrupt();
    void agent?.cancel().catch(showError);
  }

  /** The editor, the menu and the footer, as chat-input.ts's reducer keeps them; the screen draws them. */
  let input: InputState = EMPTY_INPUT;

  function setInput(next: InputState): void {
    const was = input;
    input = next;
    if (next.editor !== was.editor) screen.setEditor(next.editor);
    if (next.menu !== was.menu) screen.setMenu(next.menu);
    if (next.footer !== was.footer) screen.setFooter(next.footer);
  }

  function onKey(key: Key): void {
    const modal = screen.modal;
    if (modal) {
      // Keys answer the prompt and go nowhere else.
      const action = modalAction(modal, key);
      if (action.kind === "changed") {
        Object.assign(modal, action.patch);
        screen.changed(true);
      } else if (action.kind === "answer") {
        (modal.answer as (value: unknown) => void)(action.value);
        if (action.interrupt) interrupt();
      }
      return;
    }
    const { state, effects } = inputReducer(input, key, {
      running: screen.status.running,
      now: Date.now(),
      recall: (direction, text) => (direction === "up" ? history.previous(text) : history.next()),
    });
    setInput(state);
    for (const effect of effects) {
      switch (effect.kind) {
        case "submit":
          void submit(effect.text);
          break;
        case "interrupt":
          interrupt();
          break;
        case "leave":
          leave();
          break;
        case "expand-reasoning":
          screen.expandReasoning();
          break;
        case "history-reset":
          history.reset();
          break;
      }
    }
  }

  // Ink draws; it never reads the real stdin (this module does, in raw mode).
  const ink = render(createElement(ChatApp, { screen, p, hint: HINT }), {
    stdout,
    stdin: new PassThrough() as unknown as NodeJS.ReadStream,
    exitOnCtrlC: false,
    patchConsole: false,
    maxFps: 30,
  });
  const restoreTerminal = readKeys(stdin, stdout, onKey, () => {
    screen.width = stdout.columns || 80;
    screen.changed();
  });
  try {
    try {
      await attach(options.sessionId);
      if (options.firstMessage) void submit(options.firstMessage);
    } catch (error) {
      showError(error);
      screen.note(
        error instanceof SetupError
          ? "Chat cannot start without it: set it, then run bdsh chat again (/exit leaves)."
          : "The session could not be opened; /new tries again, /exit leaves.",
      );
    }
    await left;
    if (agent?.status === "running" || screen.status.running) {
      screen.interrupt();
      await agent?.cancel().catch(() => undefined);
    }
    await detachAgent().catch(showError);
  } finally {
    restoreTerminal();
    // The last frame: no empty editor left on screen, and how to come back to this session.
    const closing = shownSession ? `to continue this session: bdsh resume ${shortId(shownSession)}` : "";
    ink.rerender(createElement(ChatApp, { screen, p, hint: "", closing }));
    ink.unmount();
    await ink.waitUntilExit().catch(() => undefined);
  }
}

/**
 * The one reader of stdin: raw mode and bracketed paste on, each decoded key to `onKey`, a resize to
 * `onResize`. The function returned puts the terminal back as it was.
 */
function readKeys(
  stdin: NodeJS.ReadStream,
  stdout: NodeJS.WriteStream,
  onKey: (key: Key) => void,
  onResize: () => void,
): () => void {
  const decoder = new KeyDecoder();
  const onData = (chunk: Buffer | string) => {
    for (const key of decoder.push(chunk.toString())) onKey(key);
  };
  stdin.setRawMode?.(true);
  stdin.setEncoding("utf8");
  stdout.write(PASTE_ON);
  stdin.on("data", onData);
  stdin.resume();
  stdout.on("resize", onResize);
  return () => {
    stdin.off("data", onData);
    stdout.off("resize", onResize);
    stdout.write(PASTE_OFF);
    stdin.setRawMode?.(false);
    stdin.pause();
  };
}
