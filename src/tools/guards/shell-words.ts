/**
 * Shell words resolved statically, the way the shell would before running them:
 * quotes and backslashes removed, ANSI-C `$'…'` decoded, and `$1`, `${2}`, `$@`, `$*`, `$#` replaced by
 * a function's or `sh -c`'s arguments when the caller knows them, so a function body is judged with its
 * call's arguments. Everything else the running shell computes marks the word dynamic.
 *
 * Invariants: one iterative walk per word (an explicit stack, never recursion over the tree); every
 * regex is linear.
 */
import type { ShellNode } from "./shell-parse.js";

/** One argument of a simple command, resolved statically. */
export type Word = {
  /** The static text, with dynamic parts left out. */
  text: string;
  /** Contains an expansion or substitution whose value only the running shell knows. */
  dynamic: boolean;
  /** The texts the word may split into (unquoted expansions split words). */
  pieces: string[];
  /** A glob or brace expansion the shell would expand (matters for a program name). */
  expands: boolean;
  node: ShellNode | undefined;
};

/** An unquoted glob (`*`, `?`, `[`) or brace expansion (`{a,b}`, `{1..3}`); one linear scan. */
export function expandsAsPattern(raw: string): boolean {
  let open = -1;
  let separator = false;
  for (let i = 0; i < raw.length; i += 1) {
    const c = raw[i];
    if (c === "\\") i += 1;
    else if (c === "*" || c === "?" || c === "[") return true;
    else if (c === "{") {
      open = i;
      separator = false;
    } else if (open >= 0 && (c === "," || (c === "." && raw[i + 1] === "."))) separator = true;
    else if (c === "}" && open >= 0 && separator) return true;
  }
  return false;
}

const DYNAMIC_TYPES = new Set([
  "simple_expansion",
  "expansion",
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
]);

/** A word as the shell would see it before running (see the header); bounded depth, no tree recursion. */
export function resolveWord(node: ShellNode, source: string, positional?: readonly Word[]): Word {
  const word: Word = { text: "", dynamic: false, pieces: [], expands: false, node };
  let piece = "";
  // Each entry: a node and whether it sits inside double quotes.
  const stack: [ShellNode, boolean][] = [[node, false]];
  while (stack.length > 0) {
    const [n, quoted] = stack.pop() as [ShellNode, boolean];
    if (DYNAMIC_TYPES.has(n.type)) {
      const known = positional ? positionalValue(n, source, positional) : undefined;
      if (known) {
        word.dynamic ||= known.some((w) => w.dynamic);
        known.forEach((w, i) => {
          if (i > 0) {
            word.text += " ";
            if (quoted) piece += " ";
            else {
              word.pieces.push(piece);
              piece = "";
            }
          }
          word.text += w.text;
          piece += w.text;
        });
        continue;
      }
      word.dynamic = true;
      if (!quoted) {
        if (piece !== "") word.pieces.push(piece);
        piece = "";
      }
      continue;
    }
    const raw = source.slice(n.start, n.end);
    switch (n.type) {
      case "concatenation":
      case "command_name":
        for (let i = n.children.length - 1; i >= 0; i -= 1) stack.push([n.children[i] as ShellNode, quoted]);
        continue;
      case "string":
      case "translated_string":
        for (let i = n.children.length - 1; i >= 0; i -= 1) {
          const c = n.children[i] as ShellNode;
          if (c.named) stack.push([c, true]);
        }
        continue;
      case "string_content": {
        const text = raw.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c));
        word.text += text;
        piece += text;
        continue;
      }
      case "raw_string": {
        const text = raw.slice(1, -1);
        word.text += text;
        piece += text;
        continue;
      }
      case "ansi_c_string": {
        const text = decodeAnsiC(raw.slice(2, -1));
        word.text += text;
        piece += text;
        continue;
      }
      default: {
        // `word`, `number` and other literal leaves; unquoted globs and braces expand.
        if (!quoted && expandsAsPattern(raw)) word.expands = true;
        const text = quoted ? raw : raw.replace(/\\(\n|.)/g, (_, c: string) => (c === "\n" ? "" : c));
        word.text += text;
        piece += text;
      }
    }
  }
  if (piece !== "") word.pieces.push(piece);
  return word;
}

export function decodeAnsiC(body: string): string {
  const simple: Record<string, string> = {
    n: "\n",
    t: "\t",
    r: "\r",
    a: "\x07",
    b: "\b",
    e: "\x1b",
    E: "\x1b",
    f: "\f",
    v: "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
  };
  return body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/g,
    (_, e: string) => {
      const head = e[0] as string;
      if (head === "x" || head === "u" || head === "U")
        return String.fromCodePoint(Number.parseInt(e.slice(1), 16));
      if (/[0-7]/.test(head)) return String.fromCharCode(Number.parseInt(e, 8));
      if (head === "c") return String.fromCharCode((e.charCodeAt(1) & 0x1f) >>> 0);
      return simple[head] ?? `\\${e}`;
    },
  );
}

/** The name of a plain `$name` / `${name}` expansion, `undefined` for anything with operators. */
export function expansionName(node: ShellNode, source: string): string | undefined {
  if (node.type !== "simple_expansion" && node.type !== "expansion") return undefined;
  const named = node.children.filter((c) => c.named);
  const only = named[0];
  if (named.length !== 1 || !only) return undefined;
  if (only.type !== "variable_name" && only.type !== "special_variable_name") return undefined;
  if (node.type === "expansion" && node.end - node.start !== only.end - only.start + 3) return undefined;
  return source.slice(only.start, only.end);
}

/** `$1`, `${12}`, `$@`, `$*`, `$#` from the known arguments; `undefined` for anything else. */
function positionalValue(node: ShellNode, source: string, positional: readonly Word[]): Word[] | undefined {
  const name = expansionName(node, source);
  if (name === undefined) return undefined;
  if (name === "@" || name === "*") return [...positional];
  if (name === "#") return [literalWord(String(positional.length))];
  if (!/^[1-9][0-9]*$/.test(name)) return undefined;
  const value = positional[Number(name) - 1];
  return [value ?? literalWord("")];
}

export function literalWord(text: string): Word {
  return { text, dynamic: false, pieces: text === "" ? [] : [text], expands: false, node: undefined };
}
