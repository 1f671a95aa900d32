/**
 * The expansion pass of the dangerous-command detector (a hostile corpus hid `rm -rf` behind functions, aliases and `hash -p`): what a command line defines for its
 * own later commands, so a call is judged as what it runs, not as the name written.
 *
 * - Functions (`f() { rm "$@"; }`) and aliases (`alias x=rm`) defined anywhere in the command are
 *   collected before the walk; a call site is then judged through them with its arguments.
 * - `hash -p /bin/rm x` makes `x` run `/bin/rm`.
 * - A `\`-newline is removed by the shell before it splits words (`r\<newline>m` is `rm`); tree-sitter
 *   splits the word there, so the joined text is analysed too.
 *
 * Invariants: collection is one iterative walk over a tree already parsed (no recursion), and is
 * skipped by a cheap text test when the command defines nothing; definitions from every level of
 * nesting are pooled, which can only make more calls resolve (fail closed).
 */
import type { ShellNode } from "./shell-parse.js";
import { resolveWord } from "./shell-words.js";

export type FunctionDefinition = { body: ShellNode; source: string };

export type Definitions = {
  functions: Map<string, FunctionDefinition>;
  aliases: Map<string, string>;
  hashed: Map<string, string>;
};

export function emptyDefinitions(): Definitions {
  return { functions: new Map(), aliases: new Map(), hashed: new Map() };
}

/** Whether `source` may define a function, an alias or a hashed path (a superset test). */
export function mayDefine(source: string): boolean {
  return /\(\s*\)|function|alias|hash/.test(source);
}

/** Adds what the tree at `root` defines to `into`; `tick` returning true stops the walk (deadline). */
export function collectDefinitions(
  root: ShellNode,
  source: string,
  into: Definitions,
  tick: () => boolean,
): void {
  const stack: ShellNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as ShellNode;
    if (tick()) return;
    if (node.type === "function_definition") {
      const name = node.children.find((c) => c.field === "name");
      const body = node.children.find((c) => c.field === "body");
      if (name && body) into.functions.set(resolveWord(name, source).text, { body, source });
    } else if (node.type === "command") collectFromCommand(node, source, into);
    for (const child of node.children) stack.push(child);
  }
}

function collectFromCommand(node: ShellNode, source: string, into: Definitions): void {
  const name = node.children.find((c) => c.field === "name");
  if (!name) return;
  const program = resolveWord(name.children[0] ?? name, source).text;
  if (program !== "alias" && program !== "hash") return;
  const args = node.children.filter((c) => c.field === "argument").map((c) => resolveWord(c, source).text);
  if (program === "alias") {
    for (const text of args) {
      const eq = text.indexOf("=");
      if (eq > 0) into.aliases.set(text.slice(0, eq), text.slice(eq + 1));
    }
    return;
  }
  // `hash -p path name…` (bash: each name after the path runs the path; `-p` may sit in a cluster).
  for (let i = 0; i < args.length; i += 1) {
    const t = args[i] as string;
    if (/^-[a-zA-Z]*p$/.test(t) && args[i + 1] !== undefined) {
      for (const hashedName of args.slice(i + 2)) into.hashed.set(hashedName, args[i + 1] as string);
      return;
    }
    if (/^-[a-zA-Z]*p./.test(t)) {
      const path = t.slice(t.indexOf("p") + 1);
      for (const hashedName of args.slice(i + 1)) into.hashed.set(hashedName, path);
      return;
    }
  }
}

/**
 * `source` with every `\`-newline outside single quotes removed, or `undefined` when it has none. The
 * scan is linear and approximate about quoting (a heredoc body is treated as code): its verdict is added
 * to the original's, never replaces it.
 */
export function joinContinuations(source: string): string | undefined {
  if (!source.includes("\\\n")) return undefined;
  let out = "";
  let from = 0;
  let single = false;
  let double = false;
  for (let i = 0; i < source.length; i += 1) {
    const c = source[i];
    if (single) {
      if (c === "'") single = false;
      continue;
    }
    if (c === "'" && !double) single = true;
    else if (c === '"') double = !double;
    else if (c === "\\") {
      if (source[i + 1] === "\n") {
        out += source.slice(from, i);
        from = i + 2;
      }
      i += 1;
    }
  }
  return out + source.slice(from);
}
