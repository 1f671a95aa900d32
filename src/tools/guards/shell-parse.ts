/**
 * A real shell grammar for the dangerous-command detector: tree-sitter-bash, run
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
 * - A WebAssembly fault (the runtime aborts, out of memory, on inputs it spends seconds recovering from;
 *   the deadline normally cancels those long before) leaves that module instance unusable: the parser
 *   marks itself broken, the faulting parse is `undefined` (the caller fails closed), and the next
 *   `loadShellParser()` builds a fresh instance — at most `MAX_INSTANCES` per process, after which every
 *   parse is `undefined`.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type * as TreeSitter from "web-tree-sitter";
import type { AnalysisDeadline } from "./analysis-deadline.js";

type Parser = TreeSitter.Parser;

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

/** Once `deadline` has passed, the parse or the copy gives up. */
export type ShellParser = { parse(source: string, deadline: AnalysisDeadline): ShellTree | undefined };

const CHECK_EVERY = 512; // nodes copied between deadline checks

/** The language's node-type and field names by id, so the copy asks the runtime for numbers only. */
type Names = { types: readonly string[]; named: readonly boolean[]; fields: readonly (string | null)[] };

class TreeSitterShellParser implements ShellParser {
  private broken = false;
  private readonly names: Names;

  constructor(
    private readonly parser: Parser,
    language: TreeSitter.Language,
    private readonly onFault: () => void,
  ) {
    this.names = {
      types: language.types,
      named: language.types.map((_, id) => language.nodeTypeIsNamed(id)),
      fields: language.fields,
    };
  }

  parse(source: string, deadline: AnalysisDeadline): ShellTree | undefined {
    if (this.broken) return undefined;
    let tree: ReturnType<Parser["parse"]>;
    try {
      tree = this.parser.parse(source, null, {
        progressCallback: () => deadline.passed(),
      });
    } catch {
      this.fault();
      return undefined;
    } finally {
      try {
        if (!this.broken) this.parser.reset();
      } catch {
        this.fault();
      }
    }
    if (!tree) return undefined;
    try {
      return copyTree(tree, deadline, this.names);
    } catch {
      this.fault();
      return undefined;
    } finally {
      try {
        tree.delete();
      } catch {
        this.fault();
      }
    }
  }

  private fault(): void {
    if (this.broken) return;
    this.broken = true;
    this.onFault();
  }
}

function copyTree(
  tree: NonNullable<ReturnType<Parser["parse"]>>,
  deadline: AnalysisDeadline,
  names: Names,
): ShellTree | undefined {
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
        const child = node(cursor, current, names);
        current.children.push(child);
        current = child;
      } else {
        for (;;) {
          if (current === root) return { root, hasError: tree.rootNode.hasError, nodeCount: count };
          if (cursor.gotoNextSibling()) {
            const parent = current.parent as ShellNode;
            const sibling = node(cursor, parent, names);
            parent.children.push(sibling);
            current = sibling;
            break;
          }
          cursor.gotoParent();
          current = current.parent as ShellNode;
        }
      }
      count += 1;
      if (count % CHECK_EVERY === 0 && deadline.passed()) return undefined;
    }
  } finally {
    cursor.delete();
  }
}

function node(cursor: TreeSitter.TreeCursor, parent: ShellNode, names: Names): ShellNode {
  const id = cursor.nodeTypeId;
  return {
    // A MISSING node (inserted by error recovery) also marks the tree `hasError`: the caller fails closed.
    type: names.types[id] ?? "ERROR",
    field: names.fields[cursor.currentFieldId] ?? null,
    named: names.named[id] ?? false,
    start: cursor.startIndex,
    end: cursor.endIndex,
    parent,
    children: [],
  };
}

/** Fresh WebAssembly instances one process may build after faults (each keeps its memory). */
export const MAX_INSTANCES = 4;
let instances = 0;
let loading: Promise<ShellParser> | undefined;

/** A parser that parses nothing: every command is then dangerous (`analysis-failed`). */
const EXHAUSTED: ShellParser = { parse: () => undefined };

/**
 * The process's shell parser; the grammar loads on the first call. A failed load is retried on the next
 * call; after a fault the next call builds a new instance (see the header).
 */
export function loadShellParser(): Promise<ShellParser> {
  if (loading) return loading;
  if (instances >= MAX_INSTANCES) return Promise.resolve(EXHAUSTED);
  instances += 1;
  const instance = instances;
  const current = (async (): Promise<ShellParser> => {
    const require = createRequire(import.meta.url);
    // Each instance is its own module (web-tree-sitter keeps its WebAssembly module in module state).
    const runtime = pathToFileURL(
      join(dirname(require.resolve("web-tree-sitter/web-tree-sitter.wasm")), "web-tree-sitter.js"),
    );
    runtime.search = `?instance=${instance}`;
    const { Language, Parser } = (await import(runtime.href)) as typeof TreeSitter;
    await Parser.init({ printErr: () => {} }); // a fault is handled here, not printed as "Aborted()"
    const language = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
    const parser = new Parser();
    parser.setLanguage(language);
    return new TreeSitterShellParser(parser, language, () => {
      if (loading === current) loading = undefined;
    });
  })();
  loading = current;
  current.catch(() => {
    if (loading === current) loading = undefined;
    instances -= 1;
  });
  return current;
}
