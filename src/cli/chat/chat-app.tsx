/** @jsxRuntime automatic @jsxImportSource react */
/**
 * The Ink view of `bdsh chat`: draws a ChatScreen. No logic lives here: keys are decoded and
 * handled by chat-tui.ts, state is in chat-screen.ts.
 *
 * Layout, top to bottom: the transcript (each line printed once, above the live region, and left to scroll
 * with the terminal), the reasoning's last lines (dim), the reply's unfinished line (its last rows when it
 * is long), the status line while a turn runs, then the modal prompt if one is open, else the editor, then
 * a one-line footer. The live region is kept shorter than the terminal: Ink redraws a frame taller than
 * the screen by clearing the terminal.
 *
 * The transcript is written with Ink's `write` (above the frame) rather than <Static>: <Static> lays out
 * and renders its new lines, then commits again to drop them, so each streaming frame cost two full
 * renders (bench/ui: ~2x the CPU).
 *
 * Repaints: the screen announces every change; this view repaints at most `MAX_REPAINTS_PER_SECOND`
 * times a second when idle and `STREAMING_REPAINTS_PER_SECOND` while a turn runs (a throttle, so a burst
 * of deltas is one repaint), the spinner on the same clock; a change the person caused (a key, Esc, a
 * prompt opening) is drawn at the idle rate even while a turn runs.
 */
import { Box, Text, useStdout } from "ink";
import { useEffect, useLayoutEffect, useRef, useState } from "react";
import { approvalChoices, WAITING_FOR_YOU } from "../approval-choices.js";
import { statusLine } from "../render/status.js";
import { type Palette, sanitize, truncate, wrapText } from "../render/style.js";
import { commandRows, hasControls } from "../render/terminal-text.js";
import type { ChatScreen, CommandMenu, Modal } from "./chat-screen.js";
import { cursorPosition } from "./editor.js";

export const MAX_REPAINTS_PER_SECOND = 30;
/** While a reply streams, its changes (and the spinner) are drawn at this rate. Ink lays out and restyles
 * the whole live region on every frame, whatever changed, and the process pays about as much again in the
 * garbage collector's threads: at 38 frames a second a 200 tokens/s stream took ~30 % of a core, at 8 about
 * 6 %, at 6 4.2–5.2 % depending on the machine, at 5 4.6 % where 6 took 5.2 (bench/ui, RESULTS.md). Keys and
 * prompts are still drawn at once (`screen.urgent`). */
export const STREAMING_REPAINTS_PER_SECOND = 5;
const SPINNER_INTERVAL_MS = Math.round(1000 / STREAMING_REPAINTS_PER_SECOND);
const MAX_EDITOR_LINES = 12;
/** Rows of the slash-command menu shown at once (the rest scroll with the selection). */
export const MENU_ROWS = 8;
/** Rows the live region keeps besides the reply's unfinished line (reasoning, status, editor, menu, footer). */
const LIVE_CHROME_ROWS = 4 + MAX_EDITOR_LINES + 3 + MENU_ROWS;

/**
 * Re-renders on screen changes: at most MAX_REPAINTS_PER_SECOND times a second when idle (typing echoes at
 * once), STREAMING_REPAINTS_PER_SECOND while a turn runs, except for urgent changes (screen.urgent). The
 * spinner ticks on the same clock, so a running turn is one repaint per tick however many deltas arrive.
 */
function useScreen(screen: ChatScreen): number {
  const [version, setVersion] = useState(screen.version);
  useEffect(() => {
    let timer: NodeJS.Timeout | undefined;
    let spinner: NodeJS.Timeout | undefined;
    let due = 0;
    let last = 0;
    let tick = 0;
    const flush = () => {
      timer = undefined;
      last = Date.now();
      setVersion(screen.version * 1000 + (tick % 1000));
    };
    const schedule = () => {
      const urgent = screen.urgent;
      screen.urgent = false;
      const rate = screen.status.running && !urgent ? STREAMING_REPAINTS_PER_SECOND : MAX_REPAINTS_PER_SECOND;
      const at = Math.max(Date.now(), last + 1000 / rate);
      if (timer && due <= at) return;
      if (timer) clearTimeout(timer);
      due = at;
      timer = setTimeout(flush, at - Date.now());
    };
    const onChange = () => {
      if (screen.status.running && !spinner) {
        spinner = setInterval(() => {
          tick++;
          schedule();
        }, SPINNER_INTERVAL_MS);
      } else if (!screen.status.running && spinner) {
        clearInterval(spinner);
        spinner = undefined;
      }
      schedule();
    };
    const off = screen.onChange(onChange);
    onChange(); // changes made before this effect ran

    return () => {
      off();
      if (timer) clearTimeout(timer);
      if (spinner) clearInterval(spinner);
    };
  }, [screen]);
  return version;
}

/** Prints transcript lines not printed yet, above the live region, after each commit (so the frame it
 * restores under them is the one just drawn). */
function useTranscript(screen: ChatScreen): void {
  const { write } = useStdout();
  const printed = useRef(0);
  useLayoutEffect(() => {
    const { transcript } = screen;
    if (printed.current >= transcript.length) return;
    let text = "";
    for (let i = printed.current; i < transcript.length; i++) text += `${transcript[i]!.text}\n`;
    printed.current = transcript.length;
    write(text);
  });
}

export function ChatApp({
  screen,
  p,
  hint,
  closing,
}: {
  screen: ChatScreen;
  p: Palette;
  hint: string;
  /** Chat is closing: its last frame shows this line (how to continue) instead of the editor. */
  closing?: string;
}) {
  useScreen(screen);
  useTranscript(screen);
  const { stdout } = useStdout();
  const running = screen.status.running;
  const frame = Math.floor(Date.now() / SPINNER_INTERVAL_MS);
  const width = Math.max(20, screen.width);
  const liveRows = Math.max(2, (stdout.rows || 24) - LIVE_CHROME_ROWS);
  return (
    <Box flexDirection="column">
      {screen.reasoningTail.map((line, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the tail is redrawn whole each time
        <Text key={`r${i}`} dimColor wrap="truncate-end">
          {sanitize(line)}
        </Text>
      ))}
      {screen.liveLine !== "" ? <Text>{lastRows(sanitize(screen.liveLine), width, liveRows)}</Text> : null}
      {running ? (
        <Text>
          {statusLine(
            {
              frame,
              elapsedMs: Date.now() - screen.status.startedAt,
              // A prompt waits for the person: the status says so, not the tool it holds up.
              activity: screen.modal ? WAITING_FOR_YOU : screen.status.activity || "working",
              tokens: screen.usage.input + screen.usage.cachedInput + screen.usage.output,
              ...(screen.cost !== undefined ? { cost: screen.cost } : {}),
              hint: screen.planMode ? `${PLAN_MODE_MARK} · Esc to interrupt` : "Esc to interrupt",
            },
            p,
            width,
          )}
        </Text>
      ) : null}
      {closing !== undefined ? (
        closing === "" ? null : (
          <Text dimColor>{closing}</Text>
        )
      ) : screen.modal ? (
        <ModalView modal={screen.modal} width={width} />
      ) : (
        <EditorView screen={screen} width={width} />
      )}
      {closing === undefined && !screen.modal && screen.menu ? (
        <MenuView menu={screen.menu} width={width} />
      ) : null}
      {/* While a turn runs the status line carries the hint; a message (Ctrl-C again to leave) still shows. */}
      {closing === undefined && (screen.footer || !running) ? (
        <Text dimColor wrap="truncate-end">
          {screen.footer || (screen.planMode ? `${PLAN_MODE_MARK} (/default leaves it) · ${hint}` : hint)}
        </Text>
      ) : null}
    </Box>
  );
}

/** The last `rows` rows of `text` wrapped at `width` (a long unfinished line shows its end). */
function lastRows(text: string, width: number, rows: number): string {
  if (text.length <= width * rows) return text;
  return wrapText(text, width).slice(-rows).join("\n");
}

/**
 * The editor in a rounded frame. While a turn runs and the editor is empty it is one line instead: Ink
 * restyles every character it draws on every frame, and the frame's two rules of `width` characters doubled
 * the cost of each streaming frame (bench/ui: ~2.5 ms against ~1.3 ms on a 120-column terminal). The frame
 * comes back with the first key typed.
 */
function EditorView({ screen, width }: { screen: ChatScreen; width: number }) {
  const { text } = screen.editor;
  if (screen.status.running && text === "")
    return (
      <Text>
        {"› "}
        <Text inverse> </Text>
        <Text dimColor> type to steer the running turn</Text>
      </Text>
    );
  const lines = text.split("\n");
  const { line: cursorLine, column } = cursorPosition(screen.editor);
  const first = Math.max(0, Math.min(cursorLine - MAX_EDITOR_LINES + 1, lines.length - MAX_EDITOR_LINES));
  const shown = lines.slice(first, first + MAX_EDITOR_LINES);
  return (
    <Box flexDirection="column" borderStyle="round" borderDimColor paddingX={1} width={width}>
      {first > 0 ? (
        <Text dimColor>
          … {first} more line{first === 1 ? "" : "s"} above
        </Text>
      ) : null}
      {shown.map((line, i) => {
        const index = first + i;
        const prefix = index === 0 ? "› " : "  ";
        if (index !== cursorLine)
          return (
            <Text key={`l${index}`}>
              {prefix}
              {line}
            </Text>
          );
        const at = [...line.slice(0, column)].length;
        const chars = [...line];
        return (
          <Text key={`l${index}`}>
            {prefix}
            {chars.slice(0, at).join("")}
            <Text inverse>{chars[at] ?? " "}</Text>
            {chars.slice(at + 1).join("")}
          </Text>
        );
      })}
    </Box>
  );
}

/** The plan-mode indicator, on the footer while idle and on the status line while a turn runs. */
export const PLAN_MODE_MARK = "⏸ plan mode";

/** The first of `rows` rows to show so that `selected` is among them. */
function windowStart(selected: number, count: number, rows: number): number {
  return Math.max(0, Math.min(selected - rows + 1, count - rows));
}

/** The slash-command menu under the editor: each command with its help, the selected one highlighted. */
function MenuView({ menu, width }: { menu: CommandMenu; width: number }) {
  if (menu.commands.length === 0)
    return (
      <Text dimColor wrap="truncate-end">
        {"  no such command; /help lists them"}
      </Text>
    );
  const first = windowStart(menu.selected, menu.commands.length, MENU_ROWS);
  const nameWidth = Math.max(...menu.commands.map((c) => c.name.length)) + 2;
  return (
    <Box flexDirection="column">
      {menu.commands.slice(first, first + MENU_ROWS).map((command, i) => {
        const selected = first + i === menu.selected;
        const line = truncate(
          `${selected ? "›" : " "} ${command.name.padEnd(nameWidth)}${command.help}`,
          width - 1,
        );
        return (
          <Text
            key={command.name}
            color={selected ? "cyan" : undefined}
            dimColor={!selected}
            wrap="truncate-end"
          >
            {line}
          </Text>
        );
      })}
    </Box>
  );
}

/** Rows of a picker shown at once (the rest scroll with the selection). */
const PICKER_ROWS = 10;

/** Rows of a command the approval modal draws; a longer one is printed whole in the transcript first. */
export const MODAL_COMMAND_ROWS = 8;

function ModalView({ modal, width }: { modal: Modal; width: number }) {
  const inner = Math.max(10, width - 4);
  if (modal.kind === "picker") {
    const first = windowStart(modal.selected, modal.items.length, PICKER_ROWS);
    return (
      <Box flexDirection="column" borderStyle="round" borderColor="cyan" paddingX={1} width={width}>
        <Text bold color="cyan" wrap="truncate-end">
          {sanitize(modal.title)}
        </Text>
        {modal.items.slice(first, first + PICKER_ROWS).map((item, i) => {
          const selected = first + i === modal.selected;
          const detail = item.detail ? `  (${item.detail})` : "";
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: the rows are positional
            <Text key={`p${first + i}`} color={selected ? "cyan" : undefined} wrap="truncate-end">
              {truncate(`${selected ? "›" : " "} ${sanitize(item.label)}${detail}`, inner)}
            </Text>
          );
        })}
        <Text dimColor wrap="truncate-end">
          ↑/↓ move · Enter chooses · Esc closes
        </Text>
      </Box>
    );
  }
  if (modal.kind === "approval") {
    return (
      <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1} width={width}>
        <Text bold color="yellow">
          Approval needed: {sanitize(modal.tool)}
        </Text>
        {commandRows(modal.summary, inner)
          .slice(0, MODAL_COMMAND_ROWS)
          .map((line, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: static lines of one prompt
            <Text key={`s${i}`}>{line}</Text>
          ))}
        {commandRows(modal.summary, inner).length > MODAL_COMMAND_ROWS ? (
          <Text color="yellow">the command goes on: the whole of it is printed above</Text>
        ) : null}
        {hasControls(modal.summary) ? (
          <Text color="yellow">it contains control characters, shown as ␛, ␍, ⟨U+…⟩</Text>
        ) : null}
        <Text dimColor wrap="wrap">
          {truncate(sanitize(modal.reason), inner * 3)}
        </Text>
        {approvalChoices(modal.reason).map((choice) => (
          <Text key={choice.key} wrap="wrap">
            <Text bold>[{choice.key}]</Text> {choice.answer === "deny" ? "deny (Esc)" : choice.label}
          </Text>
        ))}
      </Box>
    );
  }
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="cyan" paddingX={1} width={width}>
      <Text bold color="cyan" wrap="wrap">
        {sanitize(modal.question)}
      </Text>
      {modal.options.map((option, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: options are positional (their number is the answer)
        <Text key={`o${i}`}>
          {i + 1}. {truncate(sanitize(option), inner - 4)}
        </Text>
      ))}
      <Text>
        answer: {modal.typed}
        <Text inverse> </Text>
      </Text>
      <Text dimColor>Enter answers · Esc skips</Text>
    </Box>
  );
}
