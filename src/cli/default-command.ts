/**
 * What `bdsh` means without a command (INTERFACE.md "Commands"): the habits Codex, Claude Code, opencode
 * and pi users bring.
 *
 * - `bdsh` with no words: `bdsh chat` when stdin and stdout are terminals; otherwise the help, as before.
 * - `bdsh WORDS…` whose first word is no command: the words are a task. On a terminal, `bdsh chat WORDS…`
 *   (chat opens with them as its first message); piped, or with an option only `run` has (`--json`, `-q`,
 *   `--goal`, …), `bdsh run WORDS…`.
 * - A single word close to a command's name (`bdsh sesions`) is a usage error that names the command and
 *   how to send the word as a task instead: a typo never starts an agent.
 * - `--help`, `--version` and every known command are left to the program as they are.
 *
 * Pure: the caller says which commands and options exist and whether there is a terminal.
 */

export type Routing = {
  /** Command names (and aliases) the program knows, `help` included. */
  commands: readonly string[];
  /** Options that take a value (`--cwd DIR`), long and short forms. */
  valueOptions: readonly string[];
  /** Options only `run` has: any of them sends the words to `run`. */
  runOnlyOptions: readonly string[];
  /** stdin and stdout are both terminals. */
  terminal: boolean;
};

export type Routed = { argv: string[] } | { typo: string; command: string };

const HELP_OR_VERSION = new Set(["-h", "--help", "-v", "--version"]);

/** The argv to parse: `argv` itself, or with `chat`/`run` put first; or a word taken for a typo. */
export function routeArgv(argv: readonly string[], routing: Routing): Routed {
  const words: string[] = [];
  let runOnly = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      words.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith("-") && arg !== "-") {
      if (HELP_OR_VERSION.has(arg)) return { argv: [...argv] };
      const name = arg.split("=")[0]!;
      if (routing.runOnlyOptions.includes(name)) runOnly = true;
      if (routing.valueOptions.includes(name) && !arg.includes("=")) i++;
      continue;
    }
    if (words.length === 0 && routing.commands.includes(arg)) return { argv: [...argv] };
    words.push(arg);
  }
  if (words.length === 0) return { argv: routing.terminal && !runOnly ? ["chat", ...argv] : [...argv] };
  if (words.length === 1) {
    const near = nearestCommand(words[0]!, routing.commands);
    if (near !== undefined) return { typo: words[0]!, command: near };
  }
  return { argv: [routing.terminal && !runOnly ? "chat" : "run", ...argv] };
}

/** The command `word` is most likely a typo of, if any: within one edit per four letters (at least one). */
export function nearestCommand(word: string, commands: readonly string[]): string | undefined {
  if (!/^[a-z-]+$/i.test(word)) return undefined;
  const allowed = Math.max(1, Math.floor(word.length / 4));
  let best: { command: string; distance: number } | undefined;
  for (const command of commands) {
    const distance = editDistance(word.toLowerCase(), command);
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { command, distance };
  }
  return best?.command;
}

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}
