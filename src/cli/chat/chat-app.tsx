/** @jsxRuntime automatic @jsxImportSource react */
/**
 * The Ink view of `bdsh chat` (issue 15): draws a ChatScreen. No logic lives here: keys are decoded and
 * handled by chat-tui.ts, state is in chat-screen.ts.
 *
 * Layout, top to bottom: the transcript (Ink <Static>: each line printed once, scrolling with the terminal),
 * the reasoning's last lines (dim), the reply's unfinished line, the status line while a turn runs, then
 * the modal prompt if one is open, else the editor, then a one-line footer.
 *
 * Repaints: the screen announces every change; this view repaints at most `MAX_REPAINTS_PER_SECOND`
 * times a second when idle and `STREAMING_REPAINTS_PER_SECOND` while a turn runs (a throttle, so a burst
 * of deltas is one repaint), the spinner on the same clock; a change the person caused (a key, Esc, a
 * prompt opening) is drawn at the idle rate even while a turn runs.
 */
import { Box, Static, Text } from "ink";
import { useEffect, useState } from "react";
import { statusLine } from "../render/status.js";
import { type Palette, sanitize, truncate } from "../render/style.js";
import type { ChatScreen, Modal } from "./chat-screen.js";
import { cursorPosition } from "./editor.js";

export const MAX_REPAINTS_PER_SECOND = 30;
/** While a reply streams, its changes (and the spinner) are drawn at this rate: each Ink frame costs a few
 * milliseconds of layout, and a 200 tokens/s stream at 38 frames a second took ~30 % of a core (bench/ui); RunView's status line
 * also paints 8 times a second. */
export const STREAMING_REPAINTS_PER_SECOND = 8;
const SPINNER_INTERVAL_MS = 125;
const MAX_EDITOR_LINES = 12;

/**
 * Re-renders on screen changes: at most MAX_REPAINTS_PER_SECOND times a second when idle (typing echoes at
 * once), STREAMING_REPAINTS_PER_SECOND while a turn runs, except for urgent changes (screen.urgent). The spinner ticks on the same clock, so a
 * running turn is one repaint per tick however many deltas arrive.
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

export function ChatApp({ screen, p, hint }: { screen: ChatScreen; p: Palette; hint: string }) {
  useScreen(screen);
  const running = screen.status.running;
  const frame = Math.floor(Date.now() / SPINNER_INTERVAL_MS);
  const width = Math.max(20, screen.width);
  return (
    <>
      {/* A fresh array each time: <Static> memoises on the array's identity, and the transcript only grows. */}
      <Static items={screen.transcript.slice()}>
        {(line) => <Text key={line.id}>{line.text === "" ? " " : line.text}</Text>}
      </Static>
      <Box flexDirection="column">
        {screen.reasoningTail.map((line, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the tail is redrawn whole each time
          <Text key={`r${i}`} dimColor wrap="truncate-end">
            {sanitize(line)}
          </Text>
        ))}
        {screen.liveLine !== "" ? <Text>{sanitize(screen.liveLine)}</Text> : null}
        {running ? (
          <Text>
            {statusLine(
              {
                frame,
                elapsedMs: Date.now() - screen.status.startedAt,
                activity: screen.status.activity || "working",
                tokens: screen.usage.input + screen.usage.cachedInput + screen.usage.output,
                ...(screen.cost !== undefined ? { cost: screen.cost } : {}),
                hint: "Esc to interrupt",
              },
              p,
              width,
            )}
          </Text>
        ) : null}
        {screen.modal ? (
          <ModalView modal={screen.modal} width={width} />
        ) : (
          <EditorView screen={screen} width={width} />
        )}
        <Text dimColor wrap="truncate-end">
          {screen.footer || hint}
        </Text>
      </Box>
    </>
  );
}

function EditorView({ screen, width }: { screen: ChatScreen; width: number }) {
  const { text } = screen.editor;
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

function ModalView({ modal, width }: { modal: Modal; width: number }) {
  const inner = Math.max(10, width - 4);
  if (modal.kind === "approval") {
    return (
      <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1} width={width}>
        <Text bold color="yellow">
          Approval needed: {sanitize(modal.tool)}
        </Text>
        {sanitize(modal.summary)
          .split("\n")
          .slice(0, 8)
          .map((line, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: static lines of one prompt
            <Text key={`s${i}`}>{truncate(line, inner)}</Text>
          ))}
        <Text dimColor wrap="wrap">
          {truncate(sanitize(modal.reason), inner * 3)}
        </Text>
        <Text>
          <Text bold>[y]</Text> allow once <Text bold>[s]</Text> this session <Text bold>[a]</Text> always{" "}
          <Text bold>[n]</Text> deny (Esc)
        </Text>
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
