/**
 * A real shell grammar for the dangerous-command detector (issue 14 finding 6): tree-sitter-bash, run
 * by web-tree-sitter (WebAssembly; no native build, no network: both `.wasm` files ship in the npm
 * packages).
 *
 * Invariants:
 * - The grammar loads once per process (`loadShellParser()` caches its promise); parsing is synchronous,
 *   so one parser serves every agent without interleaving.
 * - A parse never runs past its deadline: tree-sitter's progress callback cancels it, and the parser is
 *   reset so the next parse starts afresh. A cancelled parse is `undefined`, never a partial tree.
 * - The syntax tree is copied into plain objects with one iterative cursor walk (no recursion, so deep
 *   nesting cannot overflow the stack) and the WebAssembly tree is freed at once. The copy's offsets are
 *   UTF-16 indices into the parsed text (what web-tree-sitter reports for a JS string).
 * - A WebAssembly fault (the runtime aborts on some inputs it cannot handle) leaves the module unusable:
 *   the parser marks itself broken and every later parse is `undefined` (the caller fails closed).
 */
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { Language, Parser } from "web-tree-sitter";

export type ShellNode = {
  type: string;
  /** The field this node fills in its parent (`name`, `argument`, `redirect`, `body`, …). */
  field: string | null;
  named: boolean;
  start: number;
  end: number;
  parent: ShellNode | undefined;
  children: ShellNode[];
};

export type ShellTree = { root: ShellNode; hasError: boolean; nodeCount: number };

/** `deadline` is a `performance.now()` time; past it the parse or the copy gives up. */
export type ShellParser = { parse(source: string, deadline: number): ShellTree | undefined };

const CHECK_EVERY = 512; // nodes copied between deadline checks

class TreeSitterShellParser implements ShellParser {
  private broken = false;

  constructor(private readonly parser: Parser) {}

  parse(source: string, deadline: number): ShellTree | undefined {
    if (this.broken) return undefined;
    let tree: ReturnType<Parser["parse"]>;
    try {
      tree = this.parser.parse(source, null, {
        progressCallback: () => performance.now() > deadline,
      });
    } catch {
      this.broken = true;
      return undefined;
    } finally {
      try {
        this.parser.reset();
      } catch {
        this.broken = true;
      }
    }
    if (!tree) return undefined;
    try {
      return copyTree(tree, deadline);
    } finally {
      tree.delete();
    }
  }
}

function copyTree(tree: NonNullable<ReturnType<Parser["parse"]>>, deadline: number): ShellTree | undefined {
  const cursor = tree.walk();
  try {
    const root: ShellNode = {
      type: cursor.nodeType,
      field: null,
      named: true,
      start: cursor.startIndex,
      end: cursor.endIndex,
      parent: undefined,
      children: [],
    };
    let current = root;
    let count = 1;
    for (;;) {
      if (cursor.gotoFirstChild()) {
        const child = node(cursor, current);
        current.children.push(child);
        current = child;
      } else {
        for (;;) {
          if (current === root) return { root, hasError: tree.rootNode.hasError, nodeCount: count };
          if (cursor.gotoNextSibling()) {
            const parent = current.parent as ShellNode;
            const sibling = node(cursor, parent);
            parent.children.push(sibling);
            current = sibling;
            break;
          }
          cursor.gotoParent();
          current = current.parent as ShellNode;
        }
      }
      count += 1;
      if (count % CHECK_EVERY === 0 && performance.now() > deadline) return undefined;
    }
  } finally {
    cursor.delete();
  }
}

function node(
  cursor: ReturnType<NonNullable<ReturnType<Parser["parse"]>>["walk"]>,
  parent: ShellNode,
): ShellNode {
  return {
    type: cursor.nodeIsMissing ? "MISSING" : cursor.nodeType,
    field: cursor.currentFieldName,
    named: cursor.nodeIsNamed,
    start: cursor.startIndex,
    end: cursor.endIndex,
    parent,
    children: [],
  };
}

let loading: Promise<ShellParser> | undefined;

/** The process's shell parser; the grammar loads on the first call. A failed load is retried next call. */
export function loadShellParser(): Promise<ShellParser> {
  loading ??= (async () => {
    await Parser.init();
    const require = createRequire(import.meta.url);
    const language = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
    const parser = new Parser();
    parser.setLanguage(language);
    return new TreeSitterShellParser(parser);
  })();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}
