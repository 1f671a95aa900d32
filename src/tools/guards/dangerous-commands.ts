/**
 * Dangerous-command detection (Hermes `DANGEROUS_PATTERNS`, seed 000 "The DANGEROUS_PATTERNS approval
 * flow"): the commands that need the user's approval, found on a real shell syntax
 * tree (tree-sitter-bash, see shell-parse.ts), never by regexes over the command's text.
 *
 * Invariants:
 * - What runs is judged, not what is written (the approval is for what runs): functions and aliases
 *   defined in the command are expanded with their arguments at call sites, `hash -p` names followed,
 *   `\`-newlines joined (shell-expand.ts); long options match by unambiguous prefix as GNU getopt does
 *   (option-grammar.ts); wrappers are unwrapped by their option grammars and programs that run programs
 *   (awk, sed, tar, rsync, vim, less, git aliases and config, interpreters) have their inner command
 *   found (program-grammar.ts, program-runners.ts). A wrapper option the grammar does not know, or code a
 *   program would run that cannot be read, fails closed (`unresolved-command`, `dynamic-command`).
 * - Every simple command anywhere in the tree is judged: after `;`, `&&`, `||`, `&`, newlines and in
 *   pipelines, inside subshells, groups, functions, `if`/`while`/`for`/`case` bodies, `$(…)`, backticks
 *   and process substitutions. Wrappers (`sudo`, `env`, `nohup`, `timeout`, `xargs`, …) are peeled off,
 *   and code handed over as a string (`bash -c`, `eval`, `su -c`, `ssh host …`, `trap`, a heredoc fed
 *   to a shell) is parsed again, to a bounded depth.
 * - Words are resolved statically the way the shell would: quotes and backslashes removed (`r''m`,
 *   `"r"m`, `\rm` are `rm`), ANSI-C `$'…'` decoded. A program name the shell would compute at run time
 *   (a variable, a substitution, `${IFS}` glued in, arithmetic, a glob or brace expansion) is dangerous
 *   in itself (`dynamic-command`): nothing about it can be known here.
 * - Fail closed: a parse error (`unparsable`), input not analysed within the time budget
 *   (`analysis-timeout`), nesting past the depth bound (`nesting-too-deep`) and a parser that cannot
 *   load or has faulted (`analysis-failed`) are all dangerous.
 * - Linear and bounded: one parse, one iterative walk (an explicit stack, never recursion over the
 *   tree), every regex is linear; a deadline (default 20 ms of CPU time, analysis-deadline.ts, leaving room under the 50 ms bound for the overshoot: a reset and a major GC of up to 17 ms were measured on top) bounds the parse, the walk and any nested
 *   parse. The byte limit on the command is the guard's (command-guard.ts).
 * - Every match has a stable `key`; session approvals and `command_allowlist` entries are keys, and a
 *   command is allowed only when every key it matches is.
 */
import { posix } from "node:path";
import { isGitConfigEnv, isGitControlPath, isProgramSetting } from "../files/git-control.js";
import { AnalysisDeadline } from "./analysis-deadline.js";
import { type Arity, hasParsed, matchLong, parseOptions, valuesOf } from "./option-grammar.js";
import {
  AWK_OPTIONS,
  CHOWN_LONG,
  GIT_CLEAN,
  GIT_PUSH,
  GIT_RESET,
  type InterpreterGrammar,
  IPTABLES_LONG,
  interpreterGrammar,
  RM_LONG,
  RSYNC_OPTIONS,
  SED_OPTIONS,
  TAR_OPTIONS,
  WRAPPERS,
} from "./program-grammar.js";
import { awkCommands, type Extracted, exCommands, lessCommands, sedCommands } from "./program-runners.js";
import {
  collectDefinitions,
  type Definitions,
  emptyDefinitions,
  joinContinuations,
  mayDefine,
} from "./shell-expand.js";
import { loadShellParser, type ShellNode, type ShellParser } from "./shell-parse.js";
import { expansionName, literalWord, resolveWord, type Word } from "./shell-words.js";

export type DangerousMatch = { key: string; description: string };

export type AnalyzeOptions = {
  /** CPU time the analysis may take before it gives up and calls the command dangerous (analysis-deadline.ts). */
  timeBudgetMs?: number;
  /** How deep code in strings (`bash -c '…'` inside `eval "…"`, …) is parsed again. */
  maxDepth?: number;
};

export const DEFAULT_TIME_BUDGET_MS = 20;
export const DEFAULT_MAX_DEPTH = 6;

/** The description of each key (the approval prompt shows it). */
export const DANGEROUS_KEYS = {
  "recursive-delete": "recursive delete",
  "find-delete": "find deleting files",
  "xargs-delete": "xargs feeding rm",
  "dd-copy": "dd copying raw data",
  "disk-write": "writing onto a disk device",
  "disk-format": "formatting or wiping a disk",
  "chmod-world": "world-writable chmod",
  "chmod-root": "recursive chmod of a top-level path",
  "chown-recursive": "recursive chown",
  "git-reset-hard": "git reset --hard",
  "git-clean": "git clean -f",
  "force-push": "forced git push",
  "git-config-exec": "git setting that runs a program (core.fsmonitor, core.hooksPath, alias, filter, …)",
  "git-control-write": "writing a git control file (.git config, hooks, commondir, gitdir pointer)",
  "shell-c": "shell running a string (-c)",
  eval: "eval",
  "interpreter-eval": "interpreter running a string (-c/-e)",
  "shell-stdin": "shell or interpreter reading its program from input",
  "decode-exec": "decoded data run as code",
  "remote-code": "downloaded code run",
  "sql-drop": "SQL DROP",
  "sql-truncate": "SQL TRUNCATE",
  "sql-delete-all": "SQL DELETE without WHERE",
  "sql-unreadable": "SQL client fed input that cannot be read",
  "git-push-delete": "git push deleting remote branches",
  "mass-kill": "killing many processes",
  "service-stop": "stopping or disabling a service",
  "etc-write": "writing under /etc",
  "fork-bomb": "fork bomb",
  power: "shutting down or rebooting",
  "crontab-remove": "removing the crontab",
  "firewall-flush": "flushing the firewall",
  "dynamic-command": "program name computed at run time",
  "unresolved-command": "wrapped command that cannot be resolved",
  unparsable: "command that does not parse",
  "analysis-timeout": "command too complex to analyse in time",
  "nesting-too-deep": "code nested too deep to analyse",
  "analysis-failed": "command analysis unavailable",
} as const satisfies Record<string, string>;

export type DangerousKey = keyof typeof DANGEROUS_KEYS;

type Producers = { remote: number; decode: number };
const NONE = Number.POSITIVE_INFINITY;
/** Nodes between a command and the producers feeding its stdin. */
const FEEDING = new Set([
  "pipeline",
  "redirected_statement",
  "heredoc_redirect",
  "herestring_redirect",
  "negated_command",
]);

const SHELLS = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "pdksh",
  "ash",
  "fish",
  "csh",
  "tcsh",
  "yash",
  "posh",
  "rbash",
  "hush",
]);
/**
 * Interpreters without an option grammar (program-grammar.ts has python, perl, ruby, node, php, lua) and
 * the options that make them run the next argument (or the rest of the cluster).
 */
const INTERPRETERS: Record<string, { eval: readonly string[]; cluster: string; module?: readonly string[] }> =
  {
    bun: { eval: ["-e", "--eval", "-p", "--print"], cluster: "ep" },
    deno: { eval: ["eval"], cluster: "" },
    rscript: { eval: ["-e"], cluster: "e" },
    osascript: { eval: ["-e"], cluster: "e" },
    julia: { eval: ["-e", "--eval", "-E", "--print"], cluster: "eE" },
    pwsh: { eval: ["-c", "-command", "-e", "-encodedcommand", "-ec"], cluster: "" },
    powershell: { eval: ["-c", "-command", "-e", "-encodedcommand", "-ec"], cluster: "" },
    tclsh: { eval: [], cluster: "" },
    irb: { eval: [], cluster: "" },
    elixir: { eval: ["-e"], cluster: "e" },
    groovy: { eval: ["-e"], cluster: "e" },
  };
const DOWNLOADERS = new Set(["curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lynx", "links"]);
const DELETERS = new Set(["rm", "unlink", "shred", "rmdir"]);
const SQL_EXEMPT = new Set(["grep", "egrep", "fgrep", "rg", "ag", "ack", "git"]);
const DISK_TOOLS =
  /^(?:mkfs(?:\..+)?|mke2fs|mkswap|mkdosfs|mkntfs|wipefs|fdisk|sfdisk|cfdisk|parted|sgdisk|gdisk|blkdiscard)$/;
const BLOCK_DEVICE = /^\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|loop|sr)/;
/** Variables whose value a program runs as a command (git, pagers, editors, less's input filter). */
const COMMAND_VARIABLES =
  /^(?:GIT_CONFIG_(?:KEY|VALUE)_\d+|GIT_CONFIG_PARAMETERS|GIT_SSH_COMMAND|GIT_SSH|GIT_PAGER|PAGER|MANPAGER|SYSTEMD_PAGER|GIT_EDITOR|GIT_SEQUENCE_EDITOR|EDITOR|VISUAL|GIT_EXTERNAL_DIFF|GIT_ASKPASS|SSH_ASKPASS|GIT_PROXY_COMMAND|LESSOPEN|LESSCLOSE|PROMPT_COMMAND|RSYNC_RSH)$/;
/** `git config` options that take a value (the next word is not an operand). */
const GIT_CONFIG_VALUE_OPTIONS = new Set([
  "-f",
  "--file",
  "--blob",
  "--type",
  "--default",
  "--comment",
  "--value",
  "--worktree-file",
]);
const SQL_CLIENTS = new Set(["psql", "mysql", "mariadb", "sqlite3"]);
const SQLITE_VALUE_OPTIONS = new Set([
  "-cmd",
  "-init",
  "-separator",
  "-nullvalue",
  "-newline",
  "-mmap",
  "-vfs",
  "-maxsize",
  "-lookaside",
  "-pagecache",
  "-heap",
]);

/** The arguments a SQL client runs as SQL. */
function sqlCarriers(program: string, args: Word[]): Word[] {
  const out: Word[] = [];
  const long = program === "psql" ? "command" : "execute";
  const short = program === "psql" ? "-c" : "-e";
  if (program === "sqlite3") {
    let database = false;
    for (let i = 0; i < args.length; i += 1) {
      const t = (args[i] as Word).text;
      if (t === "-cmd" && args[i + 1]) out.push(args[i + 1] as Word);
      if (SQLITE_VALUE_OPTIONS.has(t)) i += 1;
      else if (!t.startsWith("-")) {
        if (database) out.push(args[i] as Word);
        database = true;
      }
    }
    return out;
  }
  for (let i = 0; i < args.length; i += 1) {
    const word = args[i] as Word;
    const t = word.text;
    if (
      t === short ||
      (/^-[a-zA-Z]+$/.test(t) && t.endsWith(short.slice(1))) ||
      (t.startsWith("--") && !t.includes("=") && t.length > 3 && long.startsWith(t.slice(2)))
    ) {
      if (args[i + 1]) out.push(args[i + 1] as Word);
      i += 1;
    } else if (t.startsWith(short) && !t.startsWith("--") && t.length > 2)
      out.push({ ...word, text: t.slice(2) });
    else if (
      t.startsWith("--") &&
      t.includes("=") &&
      long.startsWith(t.slice(2, t.indexOf("="))) &&
      t.indexOf("=") > 3
    )
      out.push({ ...word, text: t.slice(t.indexOf("=") + 1) });
  }
  return out;
}

const WRITE_REDIRECT = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"]);

/** The program as rules see it: no directory, lower case, no version suffix on interpreters. */
function programName(text: string): string {
  const base = text.slice(text.lastIndexOf("/") + 1).toLowerCase();
  const versioned = /^(python|pypy|perl|ruby|php|lua|node)[0-9.]*$/.exec(base);
  return versioned ? (versioned[1] as string) : base;
}

/** A command as a program rule sees it: its name, its words after the name, their texts, and where it is. */
type RuleCall = {
  program: string;
  args: Word[];
  texts: string[];
  node: ShellNode;
  source: string;
  depth: number;
};
type ProgramRule = (analysis: Analysis, call: RuleCall) => void;

/** The rule table: each entry names the programs it applies to. */
function programRules(entries: [string[], ProgramRule][]): ReadonlyMap<string, ProgramRule> {
  const table = new Map<string, ProgramRule>();
  for (const [programs, rule] of entries) for (const program of programs) table.set(program, rule);
  return table;
}

class Analysis {
  /** What each program's own arguments may do, by program name; the rest of `rules` applies to every program. */
  private static readonly PROGRAM_RULES = programRules([
    [
      ["rm"],
      (d, { texts }) => {
        if (hasOption(texts, "rR", ["--recursive", "--no-preserve-root"], RM_LONG)) d.add("recursive-delete");
      },
    ],
    [
      ["find"],
      (d, { args, node, source, depth }) => {
        d.find(args, node, source, depth);
      },
    ],
    [
      ["dd"],
      (d, { texts }) => {
        const target = texts.find((t) => t.startsWith("of="))?.slice(3);
        if (target && BLOCK_DEVICE.test(target)) d.add("disk-write");
        else if (target && underEtc(target)) d.add("etc-write");
        else if (texts.some((t) => t.startsWith("if=") || t.startsWith("of="))) d.add("dd-copy");
      },
    ],
    [
      ["shred"],
      (d, { texts }) => {
        if (texts.some((t) => BLOCK_DEVICE.test(t))) d.add("disk-format");
      },
    ],
    [
      ["chmod"],
      (d, { texts }) => {
        d.chmod(texts);
      },
    ],
    [
      ["chown", "chgrp"],
      (d, { texts }) => {
        if (hasOption(texts, "R", ["--recursive"], CHOWN_LONG)) d.add("chown-recursive");
      },
    ],
    [
      ["git"],
      (d, { texts, depth }) => {
        d.git(texts, depth);
      },
    ],
    [
      ["eval"],
      (d, { args, source, depth }) => {
        d.add("eval");
        for (const word of args) d.substitutionSources(word, source);
        if (args.some((w) => w.dynamic)) d.add("dynamic-command");
        d.source(args.map((w) => w.text).join(" "), depth + 1);
      },
    ],
    [
      ["source", "."],
      (d, { args, node, source }) => {
        d.script(args[0], node, source);
      },
    ],
    [
      ["trap"],
      (d, { args, source, depth }) => {
        if (args[0] && !args[0].text.startsWith("-")) d.code(args[0], source, depth);
      },
    ],
    [
      ["alias"],
      (d, { texts, depth }) => {
        for (const text of texts) {
          const eq = text.indexOf("=");
          if (eq > 0) d.source(text.slice(eq + 1), depth + 1);
        }
      },
    ],
    [
      ["su", "runuser"],
      (d, { args, node, source, depth }) => {
        let command = false;
        for (let i = 0; i < args.length; i += 1) {
          const t = (args[i] as Word).text;
          if ((t === "-c" || t === "--command") && args[i + 1]) {
            command = true;
            d.add("shell-c");
            d.code(args[i + 1] as Word, source, depth);
          }
        }
        if (!command) d.add(d.upstreamKind(node, source)); // a shell reading stdin
      },
    ],
    [
      ["flock"],
      (d, { args, source, depth }) => {
        for (let i = 0; i < args.length; i += 1) {
          const t = (args[i] as Word).text;
          if ((t === "-c" || t === "--command") && args[i + 1]) {
            d.add("shell-c");
            d.code(args[i + 1] as Word, source, depth);
          }
        }
      },
    ],
    [
      ["watch"],
      (d, { args, depth }) => {
        const rest = skipOptions(args, ["-n", "--interval", "-d", "-q", "--equexit", "--chgexit"]);
        if (rest.length > 0) d.source(rest.map((w) => w.text).join(" "), depth + 1);
      },
    ],
    [
      ["ssh"],
      (d, { args, depth }) => {
        const rest = skipOptions(
          args,
          [..."BbcDEeFIiJLlmOopQRSWw"].map((c) => `-${c}`),
        );
        if (rest.length > 1)
          d.source(
            rest
              .slice(1)
              .map((w) => w.text)
              .join(" "),
            depth + 1,
          );
      },
    ],
    [
      ["tee"],
      (d, { texts }) => {
        if (texts.some((t) => !t.startsWith("-") && underEtc(t))) d.add("etc-write");
      },
    ],
    [
      ["cp", "mv", "install", "ln", "rsync", "truncate", "touch"],
      (d, { program, texts }) => {
        const operands = texts.filter((t) => !t.startsWith("-"));
        const targetDir = texts.findIndex((t) => t === "-t" || t === "--target-directory");
        const explicit =
          targetDir >= 0
            ? texts[targetDir + 1]
            : texts.find((t) => t.startsWith("--target-directory="))?.slice(19);
        const last = operands[operands.length - 1];
        const destination = explicit ?? (program === "truncate" || program === "touch" ? undefined : last);
        if (
          (destination && underEtc(destination)) ||
          ((program === "truncate" || program === "touch") && operands.some(underEtc))
        )
          d.add("etc-write");
      },
    ],
    [
      ["sed"],
      (d, { texts }) => {
        if (
          texts.some((t) => t === "--in-place" || t.startsWith("--in-place=") || /^-[a-zA-Z]*i/.test(t)) &&
          texts.some((t) => !t.startsWith("-") && underEtc(t))
        )
          d.add("etc-write");
      },
    ],
    [
      ["kill"],
      (d, { texts }) => {
        d.kill(texts);
      },
    ],
    [
      ["pkill", "killall", "killall5"],
      (d, _) => {
        d.add("mass-kill");
      },
    ],
    [
      ["systemctl"],
      (d, { texts }) => {
        d.systemctl(texts);
      },
    ],
    [
      ["service", "rc-service"],
      (d, { texts }) => {
        if (texts.slice(1, 2).some((t) => t === "stop")) d.add("service-stop");
      },
    ],
    [
      ["launchctl"],
      (d, { texts }) => {
        if (["unload", "bootout", "disable", "remove", "stop"].includes(texts[0] ?? ""))
          d.add("service-stop");
      },
    ],
    [
      ["sv"],
      (d, { texts }) => {
        if (["stop", "down", "d", "force-stop", "kill"].includes(texts[0] ?? "")) d.add("service-stop");
      },
    ],
    [
      ["shutdown", "reboot", "halt", "poweroff"],
      (d, _) => {
        d.add("power");
      },
    ],
    [
      ["init", "telinit"],
      (d, { texts }) => {
        if (["0", "6"].includes(texts[0] ?? "")) d.add("power");
      },
    ],
    [
      ["crontab"],
      (d, { texts }) => {
        if (hasOption(texts, "r", [])) d.add("crontab-remove");
      },
    ],
    [
      ["iptables", "ip6tables", "iptables-legacy", "iptables-nft", "ip6tables-legacy", "ip6tables-nft"],
      (d, { texts }) => {
        if (hasOption(texts, "FX", ["--flush", "--delete-chain"], IPTABLES_LONG)) d.add("firewall-flush");
      },
    ],
    [
      ["nft"],
      (d, { texts }) => {
        if (texts.includes("flush")) d.add("firewall-flush");
      },
    ],
    [
      ["ufw"],
      (d, { texts }) => {
        if (texts.includes("disable") || texts.includes("reset")) d.add("firewall-flush");
      },
    ],
  ]);

  readonly matches = new Map<string, string>();
  readonly downloads = new Set<string>();
  /** Functions, aliases and hashed names the command defines (shell-expand.ts). */
  private readonly definitions: Definitions = emptyDefinitions();
  /** Functions being expanded (a recursive call is not expanded again). */
  private readonly activeFunctions = new Set<string>();
  private readonly activeAliases = new Set<string>();
  /** Function calls already judged, by name and argument texts: a repeated call is judged once. */
  private readonly calls = new Set<string>();
  /** `$1`… of the function body or `sh -c` code being judged. */
  private positional: Word[] | undefined;
  /** `git config alias.x …`, `-c alias.x=…`: git aliases, by lower-case name. */
  private readonly gitAliases = new Map<string, string>();
  /** `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n` seen so far, by `n`. */
  private readonly gitEnv = new Map<string, { key?: string; value?: string }>();
  /** Per node: where the first download and the first decode in its subtree start. */
  private readonly subtrees = new Map<ShellNode, Producers>();
  private steps = 0;
  expired = false;

  constructor(
    readonly parser: ShellParser,
    readonly deadline: AnalysisDeadline,
    readonly maxDepth: number,
  ) {}

  add(key: DangerousKey): void {
    if (!this.matches.has(key)) this.matches.set(key, DANGEROUS_KEYS[key]);
  }

  /** Counts a step of work; past the deadline the analysis stops and the command is dangerous. */
  tick(): boolean {
    if (this.expired) return true;
    this.steps += 1;
    if ((this.steps & 255) !== 0 || !this.deadline.passed()) return false;
    this.expired = true;
    this.add("analysis-timeout");
    return true;
  }

  /** Parses `source` and judges everything in it; `depth` counts the strings parsed on the way here. */
  source(source: string, depth: number, positional?: Word[]): void {
    if (this.expired) return;
    const joined = joinContinuations(source);
    if (joined !== undefined) this.parseAndWalk(joined, depth, positional);
    this.parseAndWalk(source, depth, positional);
  }

  private parseAndWalk(source: string, depth: number, positional: Word[] | undefined): void {
    if (this.expired) return;
    if (depth > this.maxDepth) {
      this.add("nesting-too-deep");
      return;
    }
    if (source.trim() === "") return;
    const tree = this.parser.parse(source, this.deadline);
    if (!tree) {
      if (this.deadline.passed()) {
        this.expired = true;
        this.add("analysis-timeout");
      } else this.add("analysis-failed");
      return;
    }
    if (tree.hasError) this.add("unparsable");
    if (mayDefine(source)) collectDefinitions(tree.root, source, this.definitions, () => this.tick());
    this.walk(tree.root, source, depth, positional);
  }

  /** Judges every node under `root`; `positional` are the `$1`… in effect there. */
  private walk(root: ShellNode, source: string, depth: number, positional: Word[] | undefined): void {
    const saved = this.positional;
    this.positional = positional;
    try {
      this.walkNodes(root, source, depth);
    } finally {
      this.positional = saved;
    }
  }

  private walkNodes(root: ShellNode, source: string, depth: number): void {
    const stack: ShellNode[] = [root];
    while (stack.length > 0) {
      const node = stack.pop() as ShellNode;
      if (this.tick()) return;
      switch (node.type) {
        case "command":
          this.command(node, source, depth);
          break;
        case "file_redirect":
          this.redirect(node, source);
          break;
        case "function_definition":
          this.functionDefinition(node, source);
          break;
        case "variable_assignment":
          // A command's own prefix assignments are judged by `command`, before the command itself.
          if (node.parent?.type !== "command") this.assignment(node, source, depth);
          break;
        case "ERROR":
        case "MISSING":
          this.add("unparsable");
          break;
        case "word":
          // The grammar can swallow a line break into a word (`ls\n\n\\rm …` is one command to it, two
          // to bash): where the tree and bash disagree, nothing can be trusted.
          if (bareNewline(source, node.start, node.end)) this.add("unparsable");
          break;
      }
      for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i] as ShellNode);
    }
  }

  private command(node: ShellNode, source: string, depth: number): void {
    const argv: Word[] = [];
    let nameNode: ShellNode | undefined;
    for (const child of node.children) {
      if (this.tick()) return;
      if (child.type === "variable_assignment") this.assignment(child, source, depth);
      const word =
        child.field === "name"
          ? (child.children[0] ?? child)
          : child.field === "argument"
            ? child
            : undefined;
      if (!word) continue;
      if (child.field === "name") nameNode = child;
      const spliced = this.positional ? this.allArguments(word, source) : undefined;
      if (spliced) argv.push(...spliced);
      else argv.push(resolveWord(word, source, this.positional));
    }
    if (argv.length === 0) return;
    // An alias is text: its value replaces the name, and the line is read again (shell-expand.ts).
    const alias =
      nameNode && !argv[0]?.dynamic ? this.definitions.aliases.get(argv[0]?.text ?? "") : undefined;
    if (alias !== undefined && nameNode && !this.activeAliases.has(argv[0]?.text ?? "")) {
      // Bash does not expand an alias again inside its own expansion (`alias ls='ls -F'`).
      const name = argv[0]?.text ?? "";
      this.activeAliases.add(name);
      try {
        this.source(`${alias} ${source.slice(nameNode.end, node.end)}`, depth + 1, this.positional);
      } finally {
        this.activeAliases.delete(name);
      }
    }
    this.argv(argv, node, source, depth);
  }

  /** `"$@"`, `$@`, `$*` as a whole word: the known arguments, one word each. */
  private allArguments(word: ShellNode, source: string): Word[] | undefined {
    const inner = word.type === "string" ? word.children.filter((c) => c.named) : [word];
    if (inner.length !== 1) return undefined;
    const name = expansionName(inner[0] as ShellNode, source);
    if (name !== "@" && !(name === "*" && word.type !== "string")) return undefined;
    return [...(this.positional ?? [])];
  }

  /** A call of a function the command defined: its body judged with the call's arguments. */
  private callFunction(name: string, args: Word[], depth: number): void {
    const definition = this.definitions.functions.get(name);
    if (!definition || this.activeFunctions.has(name)) return;
    const call = [name, ...args.map((w) => `${w.dynamic ? "$" : ""}${w.text}`)].join("\0");
    if (this.calls.has(call)) return;
    this.calls.add(call);
    if (depth + 1 > this.maxDepth) {
      this.add("nesting-too-deep");
      return;
    }
    this.activeFunctions.add(name);
    try {
      this.walk(definition.body, definition.source, depth + 1, args);
    } finally {
      this.activeFunctions.delete(name);
    }
  }

  /** `NAME=value`: variables whose value git, a pager or an editor runs as a command. */
  private assignment(node: ShellNode, source: string, depth: number): void {
    const nameNode = node.children.find((c) => c.field === "name");
    const valueNode = node.children.find((c) => c.field === "value");
    if (!nameNode || !valueNode) return;
    const name = source.slice(nameNode.start, nameNode.end);
    const value = resolveWord(valueNode, source, this.positional);
    this.gitConfigVariable(name, value);
    if (!COMMAND_VARIABLES.test(name)) return;
    if (value.dynamic) {
      this.add("dynamic-command");
      this.substitutionSources(value, source);
    }
    const git = /^GIT_CONFIG_(KEY|VALUE)_(\d+)$/.exec(name);
    if (git) {
      const entry = this.gitEnv.get(git[2] as string) ?? {};
      if (git[1] === "KEY") entry.key = value.text;
      else entry.value = value.text;
      this.gitEnv.set(git[2] as string, entry);
      if (entry.key !== undefined && entry.value !== undefined)
        this.gitSetting(entry.key, entry.value, depth);
      return;
    }
    if (name === "GIT_CONFIG_PARAMETERS") {
      for (const m of value.text.matchAll(/'([^']*)'\s*=\s*'([^']*)'|'([^'=]*)=([^']*)'/g))
        this.gitSetting(m[1] ?? m[3] ?? "", m[2] ?? m[4] ?? "", depth);
      return;
    }
    this.source(value.text.replace(/^\|+/, ""), depth + 1);
  }

  /** `GIT_CONFIG_KEY_0=core.fsmonitor`, `GIT_CONFIG_GLOBAL=f`, `GIT_TEMPLATE_DIR=d`: git settings by environment. */
  private gitConfigVariable(name: string, value: Word): void {
    if (!isGitConfigEnv(name)) return;
    if (/^GIT_CONFIG_(?:VALUE_\d+|COUNT)$/.test(name)) return; // harmless without a key
    if (/^GIT_CONFIG_KEY_\d+$/.test(name)) {
      if (value.dynamic || isProgramSetting(value.text)) this.add("git-config-exec");
      return;
    }
    if (!value.dynamic && value.text === "/dev/null") return; // hermetic: no config at all
    this.add("git-config-exec");
  }

  /** Judges one command line: wrappers peeled, then the rules of the program that really runs. */
  private argv(initial: Word[], node: ShellNode, source: string, depth: number): string | undefined {
    if (depth > this.maxDepth) {
      this.add("nesting-too-deep"); // `find -exec find -exec …`
      return undefined;
    }
    let argv = initial;
    for (let guard = 0; guard < 64 && argv.length > 0; guard += 1) {
      if (this.tick()) return undefined;
      const head = argv[0] as Word;
      if (head.dynamic || head.expands || head.text === "") {
        this.add("dynamic-command");
        return undefined;
      }
      if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(head.text)) {
        // `env GIT_CONFIG_KEY_0=core.pager …`: settings handed to git through a wrapper's environment.
        const eq = head.text.indexOf("=");
        this.gitConfigVariable(head.text.slice(0, eq), { ...head, text: head.text.slice(eq + 1) });
        argv = argv.slice(1); // an assignment in a wrapper's place (`nohup A=1 rm …`): judge what follows
        continue;
      }
      const hashed = this.definitions.hashed.get(head.text);
      if (hashed !== undefined && guard < 8) {
        argv = [literalWord(hashed), ...argv.slice(1)];
        continue;
      }
      if (this.definitions.functions.has(head.text)) this.callFunction(head.text, argv.slice(1), depth);
      const program = programName(head.text);
      // `env GIT_CONFIG_KEY_0=core.pager …`, `sudo GIT_CONFIG_PARAMETERS=… git …`: the wrapper takes the
      // assignments itself, so they are read here before it is peeled.
      if (program === "env" || program === "sudo")
        for (const word of argv.slice(1)) {
          const eq = word.text.indexOf("=");
          if (eq > 0 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(word.text.slice(0, eq)))
            this.gitConfigVariable(word.text.slice(0, eq), { ...word, text: word.text.slice(eq + 1) });
        }
      if (program === "coproc") {
        argv = coprocCommand(argv);
        continue;
      }
      const inner = unwrap(program, argv);
      if (inner !== undefined) {
        if (inner.kind === "unknown") {
          // An option the grammar does not know: where the inner command starts is unknown.
          this.add("unresolved-command");
          return program;
        }
        if (inner.dynamic && (inner.code.length > 0 || inner.callbacks.length > 0))
          this.add("dynamic-command");
        for (const code of inner.code) {
          if (program !== "env") this.add("shell-c");
          this.source(code, depth + 1);
        }
        for (const callback of inner.callbacks) {
          this.add("eval"); // `mapfile -C cb` evals `cb index line` for each line read
          this.source(callback, depth + 1);
        }
        if (inner.kind === "none") return program;
        if (inner.argv.length === 0) {
          if (inner.shell) this.add(this.upstreamKind(node, source)); // `sudo -s`, `chroot /`: a shell reading stdin
          return program;
        }
        const target = inner.argv[0];
        if (program === "xargs" && target && !target.dynamic && DELETERS.has(programName(target.text)))
          this.add("xargs-delete");
        argv = inner.argv;
        continue;
      }
      this.rules(program, argv, node, source, depth);
      return program;
    }
    if (argv.length > 0) this.add("nesting-too-deep"); // more wrappers than we peel: fail closed
    return undefined;
  }

  /** A word holding shell code: parsed again when static, dynamic code is dangerous. */
  private code(word: Word, source: string, depth: number, positional?: Word[]): void {
    if (word.dynamic) {
      this.add("dynamic-command");
      this.substitutionSources(word, source);
    }
    this.source(word.text, depth + 1, positional);
  }

  /** Download or decode inside a substitution feeding code (`bash -c "$(curl …)"`, `sh <(base64 -d …)`). */
  private substitutionSources(word: Word, source: string): boolean {
    if (!word.node) return false;
    const found = this.producersIn(word.node, source);
    if (found.remote !== NONE) this.add("remote-code");
    if (found.decode !== NONE) this.add("decode-exec");
    return found.remote !== NONE || found.decode !== NONE;
  }

  /**
   * Where the first download and the first decode start inside `root`'s subtree. Memoised per node and
   * computed bottom-up with an explicit stack, so nested substitutions and pipelines stay linear.
   */
  private producersIn(root: ShellNode, source: string): Producers {
    const cached = this.subtrees.get(root);
    if (cached) return cached;
    const stack: [ShellNode, boolean][] = [[root, false]];
    while (stack.length > 0) {
      const [n, childrenDone] = stack.pop() as [ShellNode, boolean];
      if (this.tick()) return { remote: NONE, decode: NONE };
      if (this.subtrees.has(n)) continue;
      if (!childrenDone) {
        stack.push([n, true]);
        for (const c of n.children) if (!this.subtrees.has(c)) stack.push([c, false]);
        continue;
      }
      const found = { remote: NONE, decode: NONE };
      for (const c of n.children) {
        const inner = this.subtrees.get(c);
        if (!inner) continue;
        found.remote = Math.min(found.remote, inner.remote);
        found.decode = Math.min(found.decode, inner.decode);
      }
      if (n.type === "command") {
        const kind = this.producerKind(n, source);
        if (kind === "remote-code") found.remote = Math.min(found.remote, n.start);
        if (kind === "decode-exec") found.decode = Math.min(found.decode, n.start);
      }
      this.subtrees.set(n, found);
    }
    return this.subtrees.get(root) ?? { remote: NONE, decode: NONE };
  }

  private producerKind(node: ShellNode, source: string): "remote-code" | "decode-exec" | undefined {
    const argv: Word[] = [];
    for (const child of node.children) {
      if (child.field === "name") argv.push(resolveWord(child.children[0] ?? child, source));
      else if (child.field === "argument") argv.push(resolveWord(child, source));
    }
    let rest = argv;
    for (let guard = 0; guard < 16 && rest.length > 0; guard += 1) {
      const program = programName((rest[0] as Word).text);
      if (DOWNLOADERS.has(program)) return "remote-code";
      if (isDecoder(program, rest)) return "decode-exec";
      const inner = unwrap(program, rest);
      if (inner?.kind !== "command") return undefined;
      rest = inner.argv;
    }
    return undefined;
  }

  /** The producers upstream of `node`: earlier stages of its pipeline and the body a heredoc feeds. */
  private upstreamKind(node: ShellNode, source: string): "remote-code" | "decode-exec" | "shell-stdin" {
    let kind: "remote-code" | "decode-exec" | "shell-stdin" = "shell-stdin";
    // Only through the statement that feeds this command's stdin: a bounded climb.
    for (let up = node.parent; up && FEEDING.has(up.type); up = up.parent) {
      if (up.type === "pipeline" || up.type === "redirected_statement") {
        const found = this.producersIn(up, source);
        if (found.remote < node.start) return "remote-code";
        if (found.decode < node.start) kind = "decode-exec";
      }
    }
    return kind;
  }

  private rules(program: string, argv: Word[], node: ShellNode, source: string, depth: number): void {
    const args = argv.slice(1);
    const texts = args.flatMap((word) => word.pieces);
    if (!SQL_EXEMPT.has(program)) {
      for (const word of args) this.sql(word.text);
      for (const body of stdinBodies(node, source)) this.sql(body);
    }
    if (DISK_TOOLS.test(program)) this.add("disk-format");
    this.controlWrite(program, texts);
    if (DOWNLOADERS.has(program)) this.recordDownload(program, args, node, source);
    if (this.downloads.has(posix.basename(argv[0]?.text ?? ""))) this.add("remote-code");
    if (this.runners(program, args, depth)) return;
    if (SQL_CLIENTS.has(program)) this.sqlClient(program, args, node, source);
    if (SHELLS.has(program)) {
      this.shell(args, node, source, depth);
      return;
    }
    const grammar = interpreterGrammar(program);
    if (grammar) {
      this.interpreterByGrammar(grammar, args, node, source);
      return;
    }
    const interpreter = INTERPRETERS[program];
    if (interpreter) {
      this.interpreter(interpreter, args, node, source);
      return;
    }
    Analysis.PROGRAM_RULES.get(program)?.(this, { program, args, texts, node, source, depth });
  }

  /**
   * Programs that run programs through their own languages or options (program-runners.ts):
   * every command found is judged as shell code (and the program is `shell-c` where it runs a shell line); what cannot be read is
   * `dynamic-command`. Returns whether `program` is one of them.
   */
  private runners(program: string, args: Word[], depth: number): boolean {
    const texts = args.map((w) => w.text);
    switch (program) {
      case "awk":
      case "gawk":
      case "mawk":
      case "nawk": {
        const parsed = parseOptions(texts, AWK_OPTIONS);
        const sources = valuesOf(parsed, ["-e", "--source"]);
        const hasFile = hasParsed(parsed, ["-f", "--file"]);
        if (sources.length === 0 && !hasFile && parsed.unknown === undefined) {
          const program = texts[parsed.rest];
          if (program !== undefined) sources.push(program);
        }
        if (parsed.unknown !== undefined) this.add("unresolved-command");
        this.ran(sources.map(awkCommands), args, depth);
        return true;
      }
      case "sed": {
        const parsed = parseOptions(texts, SED_OPTIONS);
        if (parsed.unknown !== undefined) this.add("unresolved-command");
        if (hasParsed(parsed, ["--sandbox"])) return false;
        const scripts = valuesOf(parsed, ["-e", "--expression"]);
        if (scripts.length === 0 && !hasParsed(parsed, ["-f", "--file"])) {
          const script = texts[parsed.operands[0] ?? parsed.rest];
          if (script !== undefined) scripts.push(script);
        }
        this.ran(scripts.map(sedCommands), args, depth);
        return false; // sed's other rules (`-i` under /etc) still apply
      }
      case "tar": {
        const parsed = parseOptions(texts, TAR_OPTIONS);
        const commands = valuesOf(parsed, [
          "--to-command",
          "--use-compress-program",
          "-I",
          "--rsh-command",
          "--info-script",
          "--new-volume-script",
          "-F",
        ]);
        for (const action of valuesOf(parsed, ["--checkpoint-action"]))
          if (/^exec=/.test(action)) commands.push(action.slice(5));
        // Old-style `tar xvf a.tar --checkpoint-action=…`: options may follow operands too.
        if (parsed.unknown !== undefined && texts.some((t) => /^--(?:ch|to|use|rsh|inf|new)/.test(t)))
          this.add("unresolved-command");
        this.ran([{ commands, opaque: false }], args, depth, false); // a program line, judged as what it runs
        return true;
      }
      case "rsync": {
        const parsed = parseOptions(texts, RSYNC_OPTIONS);
        if (
          hasParsed(parsed, [
            "--delete",
            "--delete-before",
            "--delete-during",
            "--delete-delay",
            "--delete-after",
            "--delete-excluded",
            "--delete-missing-args",
            "--remove-source-files",
            "--del",
          ])
        )
          this.add("recursive-delete");
        const commands = valuesOf(parsed, ["-e", "--rsh", "--rsync-path"]);
        if (
          parsed.unknown !== undefined &&
          texts.some((t) => /^--(?:d|rs|re)/.test(t) || /^-[a-zA-Z]*e/.test(t))
        )
          this.add("unresolved-command");
        this.ran([{ commands, opaque: false }], args, depth, false); // the remote shell, judged as what it runs
        return false; // the copy rules (a destination under /etc) still apply
      }
      case "vim":
      case "vi":
      case "nvim":
      case "ex":
      case "view":
      case "gvim":
      case "vimdiff":
      case "rvim": {
        const found: Extracted[] = [];
        for (let i = 0; i < texts.length; i += 1) {
          const t = texts[i] as string;
          if ((t === "-c" || t === "--cmd") && texts[i + 1] !== undefined)
            found.push(exCommands(texts[++i] as string));
          else if (t.startsWith("+") && t.length > 1) found.push(exCommands(t.slice(1)));
          else if (t === "-S" || t === "-u")
            found.push({ commands: [], opaque: texts[i + 1] !== "NONE" && texts[i + 1] !== "NORC" });
        }
        this.ran(found, args, depth);
        return true;
      }
      case "less":
      case "more": {
        const found = texts
          .filter((t) => t.startsWith("+") && t.length > 1)
          .map((t) => lessCommands(t.slice(1)));
        this.ran(found, args, depth);
        return true;
      }
      default:
        return false;
    }
  }

  /** Judges what a runner would run (see `runners`). */
  private ran(found: Extracted[], args: Word[], depth: number, shellCode = true): void {
    for (const { commands, opaque } of found) {
      if (opaque) this.add("dynamic-command");
      for (const command of commands) {
        if (shellCode) this.add("shell-c");
        this.source(command, depth + 1);
      }
    }
    if (
      found.length > 0 &&
      args.some((w) => w.dynamic) &&
      found.some((f) => f.commands.length > 0 || f.opaque)
    )
      this.add("dynamic-command");
  }

  /**
   * A SQL client: its SQL from arguments is judged by `sql`; SQL it would read that cannot be
   * read here — a computed `-c`, a heredoc or here-string with expansions, a pipe from anything but a
   * literal `echo`/`printf`/heredoc — is `sql-unreadable` (and `decode-exec`/`remote-code` when a
   * decoder or a download feeds it). A SQL file (`-f`, `< file`) is not read (SECURITY.md, Known limits).
   */
  private sqlClient(program: string, args: Word[], node: ShellNode, source: string): void {
    const carriers = sqlCarriers(program, args);
    for (const word of carriers) {
      if (!word.dynamic) continue;
      this.add("sql-unreadable");
      this.substitutionSources(word, source);
    }
    const texts = args.map((w) => w.text);
    const fromStdin =
      carriers.length === 0 ||
      texts.some((t, i) => (t === "-f" || t === "--file") && texts[i + 1] === "-") ||
      texts.includes("--file=-");
    if (!fromStdin) return;
    for (const redirect of redirectsOf(node)) {
      if (redirect.type === "heredoc_redirect" || redirect.type === "herestring_redirect") {
        const dynamic = redirect.children.some(
          (c) => c.type === "heredoc_body" && c.children.some((d) => d.named),
        );
        const word =
          redirect.type === "herestring_redirect" ? redirect.children.find((c) => c.named) : undefined;
        const value = word ? resolveWord(word, source, this.positional) : undefined;
        if (dynamic || value?.dynamic) {
          this.add("sql-unreadable");
          if (value) this.substitutionSources(value, source);
        }
      }
    }
    const feeders = this.pipeFeeders(node);
    if (feeders.some((stage) => !this.literalProducer(stage, source))) {
      this.add("sql-unreadable");
      const kind = this.upstreamKind(node, source);
      if (kind !== "shell-stdin") this.add(kind);
    }
  }

  /** The stages before `node` in the pipeline feeding its stdin. */
  private pipeFeeders(node: ShellNode): ShellNode[] {
    let child = node.parent?.type === "redirected_statement" ? node.parent : node;
    for (let up = child.parent; up && FEEDING.has(up.type); child = up, up = up.parent) {
      if (up.type === "pipeline") return up.children.filter((c) => c.named && c.end <= child.start);
    }
    return [];
  }

  /** `echo`/`printf` of static words, or `cat` of a heredoc without expansions: text `sql` can read. */
  private literalProducer(stage: ShellNode, source: string): boolean {
    const command =
      stage.type === "redirected_statement" ? stage.children.find((c) => c.type === "command") : stage;
    if (command?.type !== "command") return false;
    const words = command.children
      .filter((c) => c.field === "name" || c.field === "argument")
      .map((c) => resolveWord(c.field === "name" ? (c.children[0] ?? c) : c, source, this.positional));
    if (words.some((w) => w.dynamic)) return false;
    const program = programName(words[0]?.text ?? "");
    if (program === "echo" || program === "printf") return !isDecoder(program, words);
    if (program === "cat" && words.length === 1)
      return redirectsOf(command).some(
        (r) =>
          r.type === "heredoc_redirect" &&
          !r.children.some((c) => c.type === "heredoc_body" && c.children.some((d) => d.named)),
      );
    return false;
  }

  /** An interpreter read by its option grammar (program-grammar.ts): `-X dev` is not the script. */
  private interpreterByGrammar(
    grammar: InterpreterGrammar,
    args: Word[],
    node: ShellNode,
    source: string,
  ): void {
    const texts = args.map((w) => w.text);
    let i = 0;
    for (let guard = 0; guard <= texts.length; guard += 1) {
      const parsed = parseOptions(texts.slice(i), grammar.spec);
      for (const option of parsed.options) {
        if (["--version", "--help", "-h", "-V", "-v"].includes(option.name) && grammar.eval.length > 0) {
          if (!hasParsed(parsed, grammar.eval)) return;
        }
        if (grammar.eval.includes(option.name) || option.alternatives.some((a) => grammar.eval.includes(a))) {
          this.add("interpreter-eval");
          return;
        }
        if (grammar.module?.includes(option.name)) return;
      }
      i += parsed.rest;
      if (parsed.unknown === undefined) break;
      i += 1; // an option the grammar does not list: skipped (interpreters are read leniently)
    }
    const operand = args[i];
    if (operand && operand.text !== "-") {
      this.script(operand, node, source);
      return;
    }
    this.add(this.upstreamKind(node, source));
    for (const body of stdinBodies(node, source)) this.sql(body);
  }

  private shell(args: Word[], node: ShellNode, source: string, depth: number): void {
    let i = 0;
    let evalString = false;
    let fromStdin = false;
    for (; i < args.length; i += 1) {
      const word = args[i] as Word;
      const t = word.text;
      if (word.dynamic && !t.startsWith("-")) break; // a computed operand: the script (or the code)
      if (t === "--version" || t === "--help" || t === "-h") return;
      if (t === "--") {
        i += 1;
        break;
      }
      if (t === "-o" || t === "+o" || t === "-O" || t === "+O" || t === "--rcfile" || t === "--init-file") {
        i += 1;
        continue;
      }
      if (t.startsWith("--")) continue;
      if (/^[-+][a-zA-Z]+$/.test(t)) {
        if (t.startsWith("-") && t.includes("c")) evalString = true;
        if (t.startsWith("-") && t.includes("s")) fromStdin = true;
        continue;
      }
      break;
    }
    if (evalString) {
      this.add("shell-c");
      const code = args[i];
      // `sh -c 'rm "$@"' name -rf d`: the words after the name are the code's `$1`…
      if (code) this.code(code, source, depth, args.slice(i + 2));
      return;
    }
    const operand = args[i];
    if (fromStdin || !operand || operand.text === "-") {
      this.add(this.upstreamKind(node, source));
      for (const body of stdinBodies(node, source)) this.source(body, depth + 1);
      return;
    }
    this.script(operand, node, source);
  }

  /** A script operand: a download, or code from a substitution, is the danger. */
  private script(operand: Word | undefined, node: ShellNode, source: string): void {
    if (!operand) return;
    if (operand.text === "/dev/stdin" || operand.text === "-") {
      this.add(this.upstreamKind(node, source));
      return;
    }
    if (this.downloads.has(posix.basename(operand.text))) this.add("remote-code");
    if (operand.node && hasSubstitution(operand.node) && !this.substitutionSources(operand, source))
      this.add("shell-stdin");
  }

  private interpreter(
    spec: (typeof INTERPRETERS)[string],
    args: Word[],
    node: ShellNode,
    source: string,
  ): void {
    for (let i = 0; i < args.length; i += 1) {
      const word = args[i] as Word;
      const t = word.text;
      if (word.dynamic && !t.startsWith("-")) {
        // a computed script operand
        this.script(word, node, source);
        return;
      }
      const lower = t.toLowerCase();
      if (lower === "--version" || lower === "-v" || lower === "--help" || lower === "-h") return;
      if (
        spec.eval.includes(lower) ||
        spec.eval.some((e) => e.startsWith("--") && lower.startsWith(`${e}=`))
      ) {
        this.add("interpreter-eval");
        return;
      }
      if (spec.module?.includes(t)) return;
      if (
        /^-[a-zA-Z]+$/.test(t) &&
        spec.cluster !== "" &&
        [...t.slice(1)].some((c) => spec.cluster.includes(c))
      ) {
        // `python -Bc …`, `perl -ne …`; a cluster that also names a module (`-m`) is a module run.
        if (spec.module && t.includes("m")) return;
        this.add("interpreter-eval");
        return;
      }
      if (t === "-") break;
      if (t.startsWith("-")) continue;
      // The script operand.
      this.script(word, node, source);
      return;
    }
    this.add(this.upstreamKind(node, source));
    for (const body of stdinBodies(node, source)) this.sql(body);
  }

  private find(args: Word[], node: ShellNode, source: string, depth: number): void {
    for (let i = 0; i < args.length; i += 1) {
      const t = (args[i] as Word).text;
      if (t === "-delete") this.add("find-delete");
      if (t === "-exec" || t === "-execdir" || t === "-ok" || t === "-okdir") {
        let end = i + 1;
        while (end < args.length && !((args[end] as Word).text === ";" || (args[end] as Word).text === "+"))
          end += 1;
        const inner = args.slice(i + 1, end);
        if (inner.length > 0) {
          const program = this.argv(inner, node, source, depth + 1);
          if (program && DELETERS.has(program)) this.add("find-delete");
        }
        i = end;
      }
    }
  }

  private chmod(texts: string[]): void {
    const recursive = hasOption(texts, "R", ["--recursive"], CHOWN_LONG);
    const operands = texts.filter((t) => !/^-[a-zA-Z]+$/.test(t) && !t.startsWith("--"));
    const mode = operands[0];
    if (mode === undefined) return;
    if (worldWritable(mode)) this.add("chmod-world");
    if (recursive && operands.slice(1).some(topLevelPath)) this.add("chmod-root");
  }

  private git(texts: string[], depth: number, aliasDepth = 0): void {
    let i = 0;
    while (i < texts.length) {
      const t = texts[i] as string;
      // `git -c core.pager='…'`, `-c alias.x='!…'`: configuration that git runs through a shell.
      const setting = t === "-c" ? texts[i + 1] : t.startsWith("-c") ? t.slice(2) : undefined;
      if (setting !== undefined) {
        const eq = setting.indexOf("=");
        if (eq > 0) this.gitSetting(setting.slice(0, eq), setting.slice(eq + 1), depth);
        else if (isProgramSetting(setting)) this.add("git-config-exec");
      }
      // `--config-env=alias.x=VAR` takes the value from the environment; `--exec-path=dir` runs
      // `dir/git-<sub>`: neither can be read here.
      const configEnv =
        t === "--config-env" ? texts[i + 1] : t.startsWith("--config-env=") ? t.slice(13) : undefined;
      if (configEnv !== undefined && isProgramSetting(configEnv.slice(0, configEnv.indexOf("=")))) {
        this.add("git-config-exec");
        this.add("dynamic-command");
      }
      if (t.startsWith("--exec-path=")) this.add("unresolved-command");
      if (
        ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"].includes(t)
      )
        i += 2;
      else if (t.startsWith("-")) i += 1;
      else break;
    }
    const sub = texts[i];
    if (sub === undefined) return;
    const rest = texts.slice(i + 1);
    const alias = this.gitAliases.get(sub.toLowerCase());
    if (alias !== undefined && !alias.startsWith("!") && aliasDepth < 4) {
      this.git([...alias.split(/\s+/).filter((w) => w !== ""), ...rest], depth, aliasDepth + 1);
      return;
    }
    // `git clone -c core.fsmonitor=…` writes the setting into the new repository; `--template` copies hooks.
    if (sub === "clone" || sub === "init" || sub === "submodule") this.gitNewRepository(rest);
    switch (sub) {
      case "reset":
        if (longOption(rest, GIT_RESET, ["hard"])) this.add("git-reset-hard");
        return;
      case "clean":
        if (hasOption(rest, "f", ["--force"], GIT_CLEAN)) this.add("git-clean");
        return;
      case "push":
        this.gitPush(rest);
        return;
      case "config":
        this.gitConfig(rest, depth);
        return;
    }
  }

  private gitPush(rest: string[]): void {
    const operands = rest.filter((t) => !t.startsWith("-"));
    if (
      longOption(rest, GIT_PUSH, ["force", "force-with-lease", "force-if-includes", "mirror"]) ||
      rest.some((t) => /^-[a-zA-Z]*f[a-zA-Z]*$/.test(t)) ||
      operands.some((t) => t.startsWith("+") && t.length > 1)
    )
      this.add("force-push");
    if (
      longOption(rest, GIT_PUSH, ["delete", "prune"]) ||
      rest.some((t) => /^-[a-zA-Z]*d[a-zA-Z]*$/.test(t)) ||
      operands.some((t) => /^\+?:./.test(t))
    )
      this.add("git-push-delete");
  }

  /**
   * `git config [set] [--global|--file f|…] key value`: a setting git would run. `--edit` (an editor can
   * write anything) and `--add`/`--replace-all` of a program-running key count as writing one.
   */
  private gitConfig(rest: string[], depth: number): void {
    const operands: string[] = [];
    let writes = false;
    for (let i = 0; i < rest.length; i += 1) {
      const t = rest[i] as string;
      if (t === "--") {
        operands.push(...rest.slice(i + 1));
        break;
      }
      if (t === "-e" || t === "--edit") {
        this.add("git-config-exec");
        return;
      }
      if (t === "--add" || t === "--replace-all") writes = true;
      if (GIT_CONFIG_VALUE_OPTIONS.has(t)) i += 1;
      else if (!t.startsWith("-")) operands.push(t);
    }
    if (operands[0] === "edit") {
      this.add("git-config-exec");
      return;
    }
    if (operands[0] === "set" || operands[0] === "add") operands.shift();
    const [key, value] = operands;
    if (key !== undefined && value !== undefined) this.gitSetting(key, value, depth);
    else if (key !== undefined && writes && isProgramSetting(key)) this.add("git-config-exec");
  }

  /** `git clone|init|submodule -c key=value` writes the setting into the new repository; `--template` copies hooks. */
  private gitNewRepository(rest: string[]): void {
    for (let j = 0; j < rest.length; j += 1) {
      const r = rest[j] as string;
      const setting =
        r === "-c" || r === "--config" ? rest[j + 1] : r.startsWith("--config=") ? r.slice(9) : undefined;
      if (setting !== undefined && isProgramSetting(setting.split("=")[0] ?? "")) this.add("git-config-exec");
      if (r === "--template" || r.startsWith("--template=")) this.add("git-config-exec");
    }
  }

  /** Writes through `tee`, `cp`/`mv`/`ln`/`install`/`rsync`, `touch`/`mkdir`/`truncate` or an in-place edit into a git control path. */
  private controlWrite(program: string, texts: string[]): void {
    const operands = texts.filter((t) => !t.startsWith("-"));
    const inPlace =
      (program === "sed" || program === "perl") &&
      texts.some((t) => /^-[a-zA-Z]*i/.test(t) || t.startsWith("--in-place"));
    const targets =
      program === "tee" || inPlace || program === "touch" || program === "mkdir" || program === "truncate"
        ? operands
        : ["cp", "mv", "ln", "install", "rsync"].includes(program)
          ? operands.slice(-1)
          : [];
    if (targets.some(isControlTarget)) this.add("git-control-write");
  }

  /** One git setting: an alias is remembered (and run if `!…`), a command setting's value is judged. */
  private gitSetting(key: string, value: string, depth: number): void {
    const alias = /^alias\.(.+)$/i.exec(key);
    if (alias) this.gitAliases.set((alias[1] as string).toLowerCase(), value);
    // Set for git to keep (config) or for one run (-c, GIT_CONFIG_*): a person decides either way.
    if (isProgramSetting(key, value)) this.add("git-config-exec");
    if (alias ? value.startsWith("!") : isProgramSetting(key, value)) {
      this.add("shell-c");
      this.source(value.replace(/^!/, ""), depth + 1);
    }
  }

  private kill(texts: string[]): void {
    let i = 0;
    if (texts[0] === "-s" || texts[0] === "-n" || texts[0] === "--signal") i = 2;
    else if (texts[0]?.startsWith("-") && texts[0] !== "--") i = 1;
    if (texts[i] === "--") i += 1;
    if (texts.slice(i).some((t) => t === "-1")) this.add("mass-kill");
  }

  private systemctl(texts: string[]): void {
    let i = 0;
    while (i < texts.length && (texts[i] as string).startsWith("-")) {
      i += ["-H", "--host", "-M", "--machine", "-t", "--type", "-s", "--signal", "-p", "--property"].includes(
        texts[i] as string,
      )
        ? 2
        : 1;
    }
    const verb = texts[i];
    if (["stop", "disable", "mask", "kill", "isolate"].includes(verb ?? "")) this.add("service-stop");
    if (["poweroff", "reboot", "halt", "kexec", "rescue", "emergency"].includes(verb ?? ""))
      this.add("power");
  }

  private recordDownload(program: string, args: Word[], node: ShellNode, source: string): void {
    const texts = args.map((w) => w.text);
    // curl saves under the URL's name only with -O; wget always does unless told -O.
    const remoteName = hasOption(texts, "O", ["--remote-name", "--remote-name-all"]);
    for (let i = 0; i < texts.length; i += 1) {
      const t = texts[i] as string;
      if (
        t === "-o" ||
        t === "--output" ||
        (program === "wget" && (t === "-O" || t === "--output-document"))
      ) {
        const file = texts[i + 1];
        if (file) this.downloads.add(posix.basename(file));
      } else if (t.startsWith("--output=") || t.startsWith("--output-document=")) {
        this.downloads.add(posix.basename(t.slice(t.indexOf("=") + 1)));
      } else if ((program !== "curl" || remoteName) && /^(?:https?|ftp):\/\//.test(t)) {
        const path = t.replace(/[?#].*$/, "");
        const base = posix.basename(path);
        if (base !== "" && !path.endsWith("/")) this.downloads.add(base);
      }
    }
    for (const redirect of redirectsOf(node)) {
      const destination = redirectDestination(redirect, source);
      if (destination) this.downloads.add(posix.basename(destination.text));
    }
  }

  private redirect(node: ShellNode, source: string): void {
    const operator = node.children.find((c) => !c.named);
    const op = operator ? source.slice(operator.start, operator.end) : "";
    if (!WRITE_REDIRECT.has(op)) return;
    const destination = redirectDestination(node, source);
    if (!destination || destination.dynamic) return;
    if (underEtc(destination.text)) this.add("etc-write");
    if (isControlTarget(destination.text)) this.add("git-control-write");
    if (BLOCK_DEVICE.test(destination.text)) this.add("disk-write");
  }

  /** `:(){ :|:& };:` — a function that calls itself more than once, or from a pipeline. */
  private functionDefinition(node: ShellNode, source: string): void {
    const nameNode = node.children.find((c) => c.field === "name");
    const body = node.children.find((c) => c.field === "body");
    if (!nameNode || !body) return;
    const name = source.slice(nameNode.start, nameNode.end);
    let calls = 0;
    let piped = false;
    const stack: ShellNode[] = [body];
    while (stack.length > 0) {
      const n = stack.pop() as ShellNode;
      if (this.tick()) return;
      if (n.type === "command") {
        const head = n.children.find((c) => c.field === "name");
        if (head && resolveWord(head.children[0] ?? head, source).text === name) {
          calls += 1;
          if (n.parent?.type === "pipeline") piped = true;
        }
      }
      // A nested function is judged on its own: each node is scanned by one function only (linear).
      for (const child of n.children) if (child.type !== "function_definition") stack.push(child);
    }
    if (calls >= 2 || piped) this.add("fork-bomb");
  }

  /** Hermes SQL rules, on the text with `/* … *\/` and `-- …` comments removed, in any case. */
  sql(text: string): void {
    if (!/drop|truncate|delete/i.test(text)) return;
    const clean = stripSqlComments(text);
    if (
      /\bDROP\s+(?:TEMPORARY\s+|MATERIALIZED\s+)?(?:TABLE|DATABASE|SCHEMA|VIEW|INDEX|SEQUENCE|FUNCTION|TRIGGER|USER|ROLE|TYPE|EXTENSION|OWNED|COLUMN|COLLECTION)\b/i.test(
        clean,
      )
    )
      this.add("sql-drop");
    if (/\bTRUNCATE\s+(?:TABLE\s+)?[A-Za-z_"`[]/i.test(clean)) this.add("sql-truncate");
    for (const statement of clean.split(";")) {
      if (/\bDELETE\s+FROM\b/i.test(statement) && !/\bWHERE\b/i.test(statement)) this.add("sql-delete-all");
    }
  }
}

function isDecoder(program: string, argv: Word[]): boolean {
  const texts = argv.slice(1).map((w) => w.text);
  switch (program) {
    case "base64":
    case "base32":
    case "basenc":
      return texts.some((t) => t === "--decode" || /^-[a-zA-Z]*[dD]/.test(t));
    case "xxd":
      return texts.some((t) => /^-[a-zA-Z]*r/.test(t) || t === "-revert");
    case "uudecode":
    case "zcat":
    case "gunzip":
    case "bunzip2":
    case "unxz":
    case "rev":
      return true;
    case "gzip":
    case "bzip2":
    case "xz":
      return texts.some((t) => t === "--decompress" || /^-[a-zA-Z]*d/.test(t));
    case "openssl":
      return texts.some((t) => t === "-d" || t === "base64" || t === "enc");
    case "printf":
    case "echo":
      return texts.some((t) => /\\x[0-9a-fA-F]{2}|\\[0-7]{3}/.test(t));
    default:
      return false;
  }
}

/**
 * Options in `texts` (before `--`): a short cluster holding one of `shorts`, or one of `longs` — by
 * unambiguous prefix when the program's long options are given in `table` (an ambiguous prefix counts
 * as each option it could be; see option-grammar.ts).
 */
function hasOption(
  texts: string[],
  shorts: string,
  longs: readonly string[],
  table?: Readonly<Record<string, Arity>>,
): boolean {
  for (const t of texts) {
    if (t === "--") return false;
    if (t.startsWith("--")) {
      if (longs.some((l) => t === l || t.startsWith(`${l}=`))) return true;
      if (
        table &&
        longOption(
          [t],
          table,
          longs.map((l) => l.slice(2)),
        )
      )
        return true;
    } else if (t.startsWith("-") && t.length > 1) {
      for (let i = 1; i < t.length; i += 1) if (shorts.includes(t[i] as string)) return true;
    }
  }
  return false;
}

/** A `--name` in `texts` (before `--`) that names, or may name, one of `wanted` in the program's `table`. */
function longOption(
  texts: string[],
  table: Readonly<Record<string, Arity>>,
  wanted: readonly string[],
): boolean {
  for (const t of texts) {
    if (t === "--") return false;
    if (!t.startsWith("--")) continue;
    const eq = t.indexOf("=");
    const names = matchLong(eq < 0 ? t.slice(2) : t.slice(2, eq), table);
    if (names.some((n) => wanted.includes(n))) return true;
  }
  return false;
}

function skipOptions(args: Word[], withValue: readonly string[]): Word[] {
  let i = 0;
  while (i < args.length) {
    const t = (args[i] as Word).text;
    if (t === "--") return args.slice(i + 1);
    if (!t.startsWith("-")) break;
    i += withValue.includes(t) ? 2 : 1;
  }
  return args.slice(i);
}

/** A file name under `/etc` after `.`/`..`/`//` are folded. */
function underEtc(path: string): boolean {
  if (!path.startsWith("/")) return false;
  const normal = posix.normalize(path);
  return normal === "/etc" || normal.startsWith("/etc/");
}

function topLevelPath(path: string): boolean {
  if (["/", "/*", "~", "~/", "~/*", "*", ".", "./", "..", "../"].includes(path)) return true;
  return /^\/[^/]+\/?\*?$/.test(path);
}

/** Octal modes with the others-write bit, symbolic modes adding `w` for `o` or `a`. */
function worldWritable(mode: string): boolean {
  if (/^[0-7]{1,4}$/.test(mode)) return (Number.parseInt(mode.slice(-1), 8) & 2) === 2;
  for (const clause of mode.split(",")) {
    const m = /^([ugoa]*)([-+=])([rwxXst]*)$/.exec(clause);
    if (!m) continue;
    const [, who = "", op, perms = ""] = m;
    if (op !== "-" && perms.includes("w") && (who.includes("o") || who.includes("a"))) return true;
  }
  return false;
}

function stripSqlComments(text: string): string {
  const out: string[] = [];
  let from = 0;
  let i = 0;
  while (i < text.length - 1) {
    const two = text.slice(i, i + 2);
    if (two === "/*") {
      out.push(text.slice(from, i), " ");
      let depth = 1;
      i += 2;
      while (i < text.length && depth > 0) {
        if (text.startsWith("/*", i)) {
          depth += 1;
          i += 2;
        } else if (text.startsWith("*/", i)) {
          depth -= 1;
          i += 2;
        } else i += 1;
      }
      from = i;
    } else if (two === "--") {
      out.push(text.slice(from, i), " ");
      while (i < text.length && text[i] !== "\n") i += 1;
      from = i;
    } else i += 1;
  }
  out.push(text.slice(from));
  return out.join("");
}

/** A line break in `source[start, end)` that is not a `\\`-newline continuation. */
function bareNewline(source: string, start: number, end: number): boolean {
  for (let i = start; i < end; i += 1) {
    if (source[i] !== "\n") continue;
    let slashes = 0;
    for (let j = i - 1; j >= start && source[j] === "\\"; j -= 1) slashes += 1;
    if (slashes % 2 === 0) return true;
  }
  return false;
}

/** The redirects on a command: its own and those of the statement wrapping it. */
/** A path (as written) that reaches a git control path: `.git/config`, `x/.git/hooks/…`, `.git`. */
function isControlTarget(path: string): boolean {
  return isGitControlPath(posix.normalize(path).split("/"));
}

function redirectsOf(node: ShellNode): ShellNode[] {
  const out = node.children.filter((c) => c.field === "redirect");
  if (node.parent?.type === "redirected_statement")
    for (const c of node.parent.children) if (c.field === "redirect") out.push(c);
  return out;
}

function redirectDestination(node: ShellNode, source: string): Word | undefined {
  if (node.type !== "file_redirect") return undefined;
  const operator = node.children.find((c) => !c.named);
  const op = operator ? source.slice(operator.start, operator.end) : "";
  if (!WRITE_REDIRECT.has(op)) return undefined;
  const destination = node.children.find((c) => c.field === "destination");
  return destination ? resolveWord(destination, source) : undefined;
}

/** Heredoc and here-string bodies feeding a command's stdin. */
function stdinBodies(node: ShellNode, source: string): string[] {
  const out: string[] = [];
  for (const redirect of redirectsOf(node)) {
    if (redirect.type === "heredoc_redirect") {
      const body = redirect.children.find((c) => c.type === "heredoc_body");
      if (body) out.push(source.slice(body.start, body.end));
    } else if (redirect.type === "herestring_redirect") {
      const word = redirect.children.find((c) => c.named);
      if (word) out.push(resolveWord(word, source).text);
    }
  }
  return out;
}

/** The word is, or directly holds, a `$(…)`/`<(…)` (shallow: a nested one is found by its own word). */
function hasSubstitution(node: ShellNode): boolean {
  const direct = (n: ShellNode) => n.type === "command_substitution" || n.type === "process_substitution";
  return direct(node) || node.children.some(direct) || node.children.some((c) => c.children.some(direct));
}

type Unwrapped =
  | { kind: "unknown"; option: string }
  | {
      kind: "command" | "none";
      /** The inner command line (empty when none is given). */
      argv: Word[];
      /** Shell code given as option values (`flock -c`, `script -c`, `env -S`). */
      code: string[];
      /** Callbacks the program evals (`mapfile -C`). */
      callbacks: string[];
      /** With no command, a shell runs reading its input. */
      shell: boolean;
      /** An option word is computed at run time. */
      dynamic: boolean;
    };

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** A wrapper's inner command by its option grammar (program-grammar.ts); `undefined` when not a wrapper. */
function unwrap(program: string, argv: Word[]): Unwrapped | undefined {
  const grammar = WRAPPERS[program];
  if (!grammar) return undefined;
  const args = argv.slice(1 + (grammar.leadingOperands ?? 0));
  const texts = args.map((w) => w.text);
  const parsed = parseOptions(texts, grammar.spec);
  if (parsed.unknown !== undefined) return { kind: "unknown", option: parsed.unknown };
  let rest = parsed.rest;
  if (grammar.assignments) while (rest < texts.length && ASSIGNMENT.test(texts[rest] as string)) rest += 1;
  if (program === "env" && texts[rest] === "-") rest += 1; // `env -` is `env -i`
  const none = hasParsed(parsed, grammar.noCommand ?? []);
  let command = none ? [] : args.slice(rest + (grammar.operands ?? 0));
  const code = valuesOf(parsed, grammar.code ?? []);
  // `flock /tmp/l -c 'cmd'`: the code option may follow the operand.
  if (grammar.code?.includes(command[0]?.text ?? "") && command[1]) {
    code.push(command[1].text);
    command = [];
  }
  return {
    kind: none ? "none" : "command",
    argv: command,
    code,
    callbacks: valuesOf(parsed, grammar.callback ?? []),
    shell: grammar.bare === "shell" || hasParsed(parsed, grammar.shellOptions ?? []),
    dynamic: args.slice(0, rest).some((w) => w.dynamic),
  };
}

/** `coproc cmd …`, `coproc NAME { …; }`: the command after the optional name and brace. */
function coprocCommand(argv: Word[]): Word[] {
  let rest = argv.slice(1);
  if (rest.length > 1 && /^[{(]/.test(rest[1]?.text ?? "")) rest = rest.slice(1);
  if (rest[0]?.text === "{" || rest[0]?.text === "(") rest = rest.slice(1);
  else if (rest[0]?.text.startsWith("(")) rest = [literalWord(rest[0].text.slice(1)), ...rest.slice(1)];
  return rest;
}

function collect(analysis: Analysis): DangerousMatch[] {
  return [...analysis.matches].map(([key, description]) => ({ key, description }));
}

/** Every danger in `command`, first found first; empty when it is safe. Synchronous once parsed. */
export function analyzeCommand(
  parser: ShellParser,
  command: string,
  options: AnalyzeOptions = {},
): DangerousMatch[] {
  const deadline = new AnalysisDeadline(options.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS);
  const analysis = new Analysis(parser, deadline, options.maxDepth ?? DEFAULT_MAX_DEPTH);
  analysis.source(command, 0);
  return collect(analysis);
}

/**
 * A parser's first analyses run cold (the WebAssembly and the walk are not yet compiled by the JIT): a
 * six-line script took over 25 ms on its first analysis and 1.7 ms after, so the first command of every
 * process failed closed as `analysis-timeout`. Each parser is warmed once, unbudgeted, before its first
 * real command; the budget then measures the input, not the JIT.
 */
const WARM_UP = [
  'for f in $(ls src); do [ -s "$f" ] && echo "$f" | grep -q x; done > out.txt 2>&1',
  'x=$(curl -s -o a.json -w "%{http_code}" -X POST -d "{\\"a\\":1}" "$base"); echo "$x" && rm -f a.json',
  "git status && npm test -- --run || { sed -n '1,5p' log; exit 1; }",
];
const warmed = new WeakMap<ShellParser, Promise<void>>();

/** Yields between warm-up analyses, so the event loop is never held for the whole warm-up. */
export function warmParser(parser: ShellParser): Promise<void> {
  let done = warmed.get(parser);
  if (!done) {
    done = (async () => {
      for (let round = 0; round < 3; round++)
        for (const command of WARM_UP) {
          await new Promise((resolve) => setImmediate(resolve));
          analyzeCommand(parser, command, { timeBudgetMs: Number.POSITIVE_INFINITY });
        }
    })();
    warmed.set(parser, done);
  }
  return done;
}

/** `analyzeCommand` with the process's parser; a parser that cannot load makes everything dangerous. */
export async function detectDangerousCommands(
  command: string,
  options: AnalyzeOptions = {},
): Promise<DangerousMatch[]> {
  let parser: ShellParser;
  try {
    parser = await loadShellParser();
  } catch {
    return [{ key: "analysis-failed", description: DANGEROUS_KEYS["analysis-failed"] }];
  }
  await warmParser(parser);
  return analyzeCommand(parser, command, options);
}

/** The first danger in `command`, if any. */
export async function detectDangerousCommand(
  command: string,
  options: AnalyzeOptions = {},
): Promise<DangerousMatch | undefined> {
  return (await detectDangerousCommands(command, options))[0];
}
