/**
 * Dangerous-command detection (Hermes `DANGEROUS_PATTERNS`, seed 000 "The DANGEROUS_PATTERNS approval
 * flow"; issue 14 finding 6): the commands that need the user's approval, found on a real shell syntax
 * tree (tree-sitter-bash, see shell-parse.ts), never by regexes over the command's text.
 *
 * Invariants:
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
import { loadShellParser, type ShellNode, type ShellParser } from "./shell-parse.js";

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
  "mass-kill": "killing many processes",
  "service-stop": "stopping or disabling a service",
  "etc-write": "writing under /etc",
  "fork-bomb": "fork bomb",
  power: "shutting down or rebooting",
  "crontab-remove": "removing the crontab",
  "firewall-flush": "flushing the firewall",
  "dynamic-command": "program name computed at run time",
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

/** One argument of a simple command, resolved statically. */
type Word = {
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
/** Interpreters and the options that make them run the next argument (or the rest of the cluster). */
const INTERPRETERS: Record<string, { eval: readonly string[]; cluster: string; module?: readonly string[] }> =
  {
    python: { eval: ["-c"], cluster: "c", module: ["-m"] },
    pypy: { eval: ["-c"], cluster: "c", module: ["-m"] },
    perl: { eval: ["-e", "-E"], cluster: "eE" },
    ruby: { eval: ["-e"], cluster: "e" },
    node: { eval: ["-e", "--eval", "-p", "--print"], cluster: "ep" },
    nodejs: { eval: ["-e", "--eval", "-p", "--print"], cluster: "ep" },
    bun: { eval: ["-e", "--eval", "-p", "--print"], cluster: "ep" },
    deno: { eval: ["eval"], cluster: "" },
    php: { eval: ["-r", "-R", "-B", "-E"], cluster: "rRBE" },
    lua: { eval: ["-e"], cluster: "e" },
    luajit: { eval: ["-e"], cluster: "e" },
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
const WRITE_REDIRECT = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"]);

/** The program as rules see it: no directory, lower case, no version suffix on interpreters. */
function programName(text: string): string {
  const base = text.slice(text.lastIndexOf("/") + 1).toLowerCase();
  const versioned = /^(python|pypy|perl|ruby|php|lua|node)[0-9.]*$/.exec(base);
  return versioned ? (versioned[1] as string) : base;
}

class Analysis {
  readonly matches = new Map<string, string>();
  readonly downloads = new Set<string>();
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
  source(source: string, depth: number): void {
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
    const stack: ShellNode[] = [tree.root];
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
        case "variable_assignment":
          this.assignment(node, source);
          break;
        case "function_definition":
          this.functionDefinition(node, source);
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
    for (const child of node.children) {
      if (this.tick()) return;
      if (child.field === "name") argv.push(resolveWord(child.children[0] ?? child, source));
      else if (child.field === "argument") argv.push(resolveWord(child, source));
    }
    if (argv.length === 0) return;
    this.argv(argv, node, source, depth);
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
        const eq = head.text.indexOf("=");
        this.gitEnv(head.text.slice(0, eq), { ...head, text: head.text.slice(eq + 1) });
        argv = argv.slice(1); // an assignment in a wrapper's place (`nohup A=1 rm …`): judge what follows
        continue;
      }
      const program = programName(head.text);
      // `env GIT_CONFIG_KEY_0=core.pager …`, `sudo GIT_CONFIG_PARAMETERS=… git …`
      if (program === "env" || program === "sudo")
        for (const word of argv.slice(1)) {
          const eq = word.text.indexOf("=");
          if (eq > 0 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(word.text.slice(0, eq)))
            this.gitEnv(word.text.slice(0, eq), { ...word, text: word.text.slice(eq + 1) });
        }
      const inner = unwrap(program, argv);
      if (inner === "stop") return program;
      if (inner !== undefined) {
        const target = inner[0];
        if (program === "xargs" && target && !target.dynamic && DELETERS.has(programName(target.text)))
          this.add("xargs-delete");
        if (program === "env") this.envSplitString(argv, source, depth);
        // `sudo -s` / `sudo -i` with no command: a root shell reading its commands from stdin.
        if (
          program === "sudo" &&
          inner.length === 0 &&
          argv.slice(1).some((w) => /^-[a-zA-Z]*[si]|^--(?:shell|login)$/.test(w.text))
        )
          this.add(this.upstreamKind(node, source));
        argv = inner;
        continue;
      }
      this.rules(program, argv, node, source, depth);
      return program;
    }
    if (argv.length > 0) this.add("nesting-too-deep"); // more wrappers than we peel: fail closed
    return undefined;
  }

  /** `env -S 'rm -rf d'` splits its string into the command line. */
  private envSplitString(argv: Word[], source: string, depth: number): void {
    for (let i = 1; i < argv.length; i += 1) {
      const text = (argv[i] as Word).text;
      if (text === "-S" || text === "--split-string") {
        const next = argv[i + 1];
        if (next) this.code(next, source, depth);
      } else if (text.startsWith("--split-string=")) this.source(text.slice(15), depth + 1);
      else if (text.startsWith("-S") && text.length > 2) this.source(text.slice(2), depth + 1);
    }
  }

  /** A word holding shell code: parsed again when static, dynamic code is dangerous. */
  private code(word: Word, source: string, depth: number): void {
    if (word.dynamic) {
      this.add("dynamic-command");
      this.substitutionSources(word, source);
    }
    this.source(word.text, depth + 1);
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
      if (inner === undefined || inner === "stop") return undefined;
      rest = inner;
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
    if (SHELLS.has(program)) {
      this.shell(args, node, source, depth);
      return;
    }
    const interpreter = INTERPRETERS[program];
    if (interpreter) {
      this.interpreter(interpreter, args, node, source);
      return;
    }
    switch (program) {
      case "rm":
        if (hasOption(texts, "rR", ["--recursive", "--no-preserve-root"])) this.add("recursive-delete");
        return;
      case "find":
        this.find(args, node, source, depth);
        return;
      case "dd": {
        const target = texts.find((t) => t.startsWith("of="))?.slice(3);
        if (target && BLOCK_DEVICE.test(target)) this.add("disk-write");
        else if (target && underEtc(target)) this.add("etc-write");
        else if (texts.some((t) => t.startsWith("if=") || t.startsWith("of="))) this.add("dd-copy");
        return;
      }
      case "shred":
        if (texts.some((t) => BLOCK_DEVICE.test(t))) this.add("disk-format");
        return;
      case "chmod":
        this.chmod(texts);
        return;
      case "chown":
      case "chgrp":
        if (hasOption(texts, "R", ["--recursive"])) this.add("chown-recursive");
        return;
      case "git":
        this.git(texts, depth);
        return;
      case "eval":
        this.add("eval");
        for (const word of args) this.substitutionSources(word, source);
        if (args.some((w) => w.dynamic)) this.add("dynamic-command");
        this.source(args.map((w) => w.text).join(" "), depth + 1);
        return;
      case "source":
      case ".":
        this.script(args[0], node, source);
        return;
      case "trap":
        if (args[0] && !args[0].text.startsWith("-")) this.code(args[0], source, depth);
        return;
      case "alias":
        for (const text of texts) {
          const eq = text.indexOf("=");
          if (eq > 0) this.source(text.slice(eq + 1), depth + 1);
        }
        return;
      case "su":
      case "runuser": {
        let command = false;
        for (let i = 0; i < args.length; i += 1) {
          const t = (args[i] as Word).text;
          if ((t === "-c" || t === "--command") && args[i + 1]) {
            command = true;
            this.add("shell-c");
            this.code(args[i + 1] as Word, source, depth);
          }
        }
        if (!command) this.add(this.upstreamKind(node, source)); // a shell reading stdin
        return;
      }
      case "flock":
        for (let i = 0; i < args.length; i += 1) {
          const t = (args[i] as Word).text;
          if ((t === "-c" || t === "--command") && args[i + 1]) {
            this.add("shell-c");
            this.code(args[i + 1] as Word, source, depth);
          }
        }
        return;
      case "watch": {
        const rest = skipOptions(args, ["-n", "--interval", "-d", "-q", "--equexit", "--chgexit"]);
        if (rest.length > 0) this.source(rest.map((w) => w.text).join(" "), depth + 1);
        return;
      }
      case "ssh": {
        const rest = skipOptions(
          args,
          [..."BbcDEeFIiJLlmOopQRSWw"].map((c) => `-${c}`),
        );
        if (rest.length > 1)
          this.source(
            rest
              .slice(1)
              .map((w) => w.text)
              .join(" "),
            depth + 1,
          );
        return;
      }
      case "tee":
        if (texts.some((t) => !t.startsWith("-") && underEtc(t))) this.add("etc-write");
        return;
      case "cp":
      case "mv":
      case "install":
      case "ln":
      case "rsync":
      case "truncate":
      case "touch": {
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
          this.add("etc-write");
        return;
      }
      case "sed":
        if (
          texts.some((t) => t === "--in-place" || t.startsWith("--in-place=") || /^-[a-zA-Z]*i/.test(t)) &&
          texts.some((t) => !t.startsWith("-") && underEtc(t))
        )
          this.add("etc-write");
        return;
      case "kill":
        this.kill(texts);
        return;
      case "pkill":
      case "killall":
      case "killall5":
        this.add("mass-kill");
        return;
      case "systemctl":
        this.systemctl(texts);
        return;
      case "service":
      case "rc-service":
        if (texts.slice(1, 2).some((t) => t === "stop")) this.add("service-stop");
        return;
      case "launchctl":
        if (["unload", "bootout", "disable", "remove", "stop"].includes(texts[0] ?? ""))
          this.add("service-stop");
        return;
      case "sv":
        if (["stop", "down", "d", "force-stop", "kill"].includes(texts[0] ?? "")) this.add("service-stop");
        return;
      case "shutdown":
      case "reboot":
      case "halt":
      case "poweroff":
        this.add("power");
        return;
      case "init":
      case "telinit":
        if (["0", "6"].includes(texts[0] ?? "")) this.add("power");
        return;
      case "crontab":
        if (hasOption(texts, "r", [])) this.add("crontab-remove");
        return;
      case "iptables":
      case "ip6tables":
      case "iptables-legacy":
      case "iptables-nft":
      case "ip6tables-legacy":
      case "ip6tables-nft":
        if (hasOption(texts, "FX", ["--flush", "--delete-chain"])) this.add("firewall-flush");
        return;
      case "nft":
        if (texts.includes("flush")) this.add("firewall-flush");
        return;
      case "ufw":
        if (texts.includes("disable") || texts.includes("reset")) this.add("firewall-flush");
        return;
    }
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
      if (code) this.code(code, source, depth);
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
    const recursive = hasOption(texts, "R", ["--recursive"]);
    const operands = texts.filter((t) => !/^-[a-zA-Z]+$/.test(t) && !t.startsWith("--"));
    const mode = operands[0];
    if (mode === undefined) return;
    if (worldWritable(mode)) this.add("chmod-world");
    if (recursive && operands.slice(1).some(topLevelPath)) this.add("chmod-root");
  }

  private git(texts: string[], depth: number): void {
    let i = 0;
    while (i < texts.length) {
      const t = texts[i] as string;
      // `git -c core.pager='…'`, `-c alias.x='!…'`: configuration that git runs through a shell.
      const setting = t === "-c" ? texts[i + 1] : t.startsWith("-c") ? t.slice(2) : undefined;
      if (setting !== undefined) {
        const eq = setting.indexOf("=");
        if (eq > 0 && isProgramSetting(setting.slice(0, eq))) {
          this.add("git-config-exec");
          this.add("shell-c");
          this.source(setting.slice(eq + 1).replace(/^!/, ""), depth + 1);
        } else if (eq < 0 && isProgramSetting(setting)) this.add("git-config-exec");
      }
      // `--config-env core.pager=VAR`: the value comes from the environment.
      const fromEnv =
        t === "--config-env" ? texts[i + 1] : t.startsWith("--config-env=") ? t.slice(13) : undefined;
      if (fromEnv !== undefined && isProgramSetting(fromEnv.split("=")[0] ?? "")) this.add("git-config-exec");
      if (["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path"].includes(t))
        i += 2;
      else if (t.startsWith("-")) i += 1;
      else break;
    }
    const sub = texts[i];
    const rest = texts.slice(i + 1);
    if (sub === "config") this.gitConfig(rest);
    // `git clone -c core.fsmonitor=…` writes the setting into the new repository; `--template` copies hooks.
    if (sub === "clone" || sub === "init" || sub === "submodule") {
      for (let j = 0; j < rest.length; j += 1) {
        const r = rest[j] as string;
        const setting =
          r === "-c" || r === "--config" ? rest[j + 1] : r.startsWith("--config=") ? r.slice(9) : undefined;
        if (setting !== undefined && isProgramSetting(setting.split("=")[0] ?? ""))
          this.add("git-config-exec");
        if (r === "--template" || r.startsWith("--template=")) this.add("git-config-exec");
      }
    }
    if (sub === "reset" && rest.includes("--hard")) this.add("git-reset-hard");
    if (sub === "clean" && hasOption(rest, "f", ["--force"])) this.add("git-clean");
    if (sub === "push") {
      const forced =
        rest.some(
          (t) =>
            t === "--force" ||
            t === "--mirror" ||
            t.startsWith("--force-with-lease") ||
            t === "--force-if-includes",
        ) ||
        rest.some((t) => /^-[a-zA-Z]*f[a-zA-Z]*$/.test(t)) ||
        rest.some((t) => t.startsWith("+") && t.length > 1);
      if (forced) this.add("force-push");
    }
  }

  /**
   * `git config` writing a setting that runs a program: `git config [--file f] key value`, `git config set
   * key value`, `--add`/`--replace-all`, and `--edit` (an editor can write anything). Reads pass.
   */
  private gitConfig(rest: string[]): void {
    const withValue = [
      "-f",
      "--file",
      "--blob",
      "--type",
      "--default",
      "--comment",
      "--value",
      "--worktree-file",
    ];
    const operands: string[] = [];
    let writes = false;
    for (let j = 0; j < rest.length; j += 1) {
      const r = rest[j] as string;
      if (r === "--add" || r === "--replace-all") writes = true;
      if (withValue.includes(r)) j += 1;
      else if (!r.startsWith("-")) operands.push(r);
    }
    const verbs = [
      "set",
      "get",
      "unset",
      "list",
      "edit",
      "rename-section",
      "remove-section",
      "get-color",
      "get-colorbool",
    ];
    const verb = verbs.includes(operands[0] ?? "") ? operands.shift() : undefined;
    if (verb === "edit" || rest.includes("-e") || rest.includes("--edit")) {
      this.add("git-config-exec");
      return;
    }
    const name = operands[0];
    if (name === undefined || !isProgramSetting(name, operands[1])) return;
    if (verb === "set" || (verb === undefined && (operands.length >= 2 || writes)))
      this.add("git-config-exec");
  }

  /** `GIT_CONFIG_KEY_0=core.fsmonitor`, `GIT_CONFIG_PARAMETERS=…`, `GIT_CONFIG_GLOBAL=f`: settings by environment. */
  private gitEnv(name: string, value: Word | undefined): void {
    if (!isGitConfigEnv(name)) return;
    if (/^GIT_CONFIG_(?:VALUE_\d+|COUNT)$/.test(name)) return; // harmless without a key
    if (/^GIT_CONFIG_KEY_\d+$/.test(name)) {
      if (!value || value.dynamic || isProgramSetting(value.text)) this.add("git-config-exec");
      return;
    }
    if (value && !value.dynamic && value.text === "/dev/null") return; // hermetic: no config at all
    this.add("git-config-exec");
  }

  private assignment(node: ShellNode, source: string): void {
    const name = node.children.find((c) => c.field === "name");
    const value = node.children.find((c) => c.field === "value");
    if (!name) return;
    this.gitEnv(source.slice(name.start, name.end), value ? resolveWord(value, source) : undefined);
  }

  /** Writes through a redirect, `tee`, `cp`/`mv`/`ln`/`install` or an in-place edit into a git control path. */
  private controlWrite(program: string, texts: string[]): void {
    const operands = texts.filter((t) => !t.startsWith("-"));
    const inPlace =
      (program === "sed" || program === "perl") &&
      texts.some((t) => /^-[a-zA-Z]*i/.test(t) || t.startsWith("--in-place"));
    const targets =
      program === "tee" || inPlace
        ? operands
        : ["cp", "mv", "ln", "install", "rsync", "touch", "truncate", "mkdir"].includes(program)
          ? program === "touch" || program === "mkdir" || program === "truncate"
            ? operands
            : operands.slice(-1)
          : [];
    if (targets.some(isControlTarget)) this.add("git-control-write");
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
    if (BLOCK_DEVICE.test(destination.text)) this.add("disk-write");
    if (isControlTarget(destination.text)) this.add("git-control-write");
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

/** Options in `texts` (before `--`): a short cluster holding one of `shorts`, or one of `longs`. */
function hasOption(texts: string[], shorts: string, longs: readonly string[]): boolean {
  for (const t of texts) {
    if (t === "--") return false;
    if (t.startsWith("--")) {
      if (longs.some((l) => t === l || t.startsWith(`${l}=`))) return true;
    } else if (t.startsWith("-") && t.length > 1) {
      for (let i = 1; i < t.length; i += 1) if (shorts.includes(t[i] as string)) return true;
    }
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

/** An unquoted glob (`*`, `?`, `[`) or brace expansion (`{a,b}`, `{1..3}`); one linear scan. */
function expandsAsPattern(raw: string): boolean {
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

/** The redirects on a command: its own and those of the statement wrapping it. */
function redirectsOf(node: ShellNode): ShellNode[] {
  const out = node.children.filter((c) => c.field === "redirect");
  if (node.parent?.type === "redirected_statement")
    for (const c of node.parent.children) if (c.field === "redirect") out.push(c);
  return out;
}

/** A path (as written) that reaches a git control path: `.git/config`, `x/.git/hooks/…`, `.git`. */
function isControlTarget(path: string): boolean {
  return isGitControlPath(posix.normalize(path).split("/"));
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

const DYNAMIC_TYPES = new Set([
  "simple_expansion",
  "expansion",
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
]);

/** A word as the shell would see it before running (see the header); bounded depth, no tree recursion. */
function resolveWord(node: ShellNode, source: string): Word {
  const word: Word = { text: "", dynamic: false, pieces: [], expands: false, node };
  let piece = "";
  // Each entry: a node and whether it sits inside double quotes.
  const stack: [ShellNode, boolean][] = [[node, false]];
  while (stack.length > 0) {
    const [n, quoted] = stack.pop() as [ShellNode, boolean];
    if (DYNAMIC_TYPES.has(n.type)) {
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

function decodeAnsiC(body: string): string {
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

/**
 * Wrapper programs: the command line they run, `"stop"` when they run nothing, `undefined` when the
 * program is not a wrapper. The listed options take a value.
 */
function unwrap(program: string, argv: Word[]): Word[] | "stop" | undefined {
  const args = argv.slice(1);
  const skip = (withValue: readonly string[], { assignments = false, positional = 0 } = {}) => {
    let i = 0;
    while (i < args.length) {
      const t = (args[i] as Word).text;
      if (t === "--") {
        i += 1;
        break;
      }
      if (t.startsWith("-") && t.length > 1) {
        i += withValue.includes(t) ? 2 : 1;
        continue;
      }
      if (assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(t)) {
        i += 1;
        continue;
      }
      break;
    }
    return args.slice(i + positional);
  };
  switch (program) {
    case "sudo":
      return skip(
        [
          "-u",
          "-g",
          "-C",
          "-D",
          "-h",
          "-p",
          "-r",
          "-t",
          "-U",
          "-T",
          "-R",
          "--user",
          "--group",
          "--chdir",
          "--prompt",
          "--role",
          "--type",
          "--other-user",
          "--command-timeout",
          "--host",
          "--close-from",
          "--chroot",
        ],
        { assignments: true },
      );
    case "doas":
      return skip(["-u", "-C"]);
    case "env":
      return skip(["-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-P"], { assignments: true });
    case "command": {
      if (args.some((w) => w.text === "-v" || w.text === "-V")) return "stop";
      return skip([]);
    }
    case "exec":
      return skip(["-a"]);
    case "builtin":
    case "nohup":
    case "setsid":
    case "unbuffer":
    case "busybox":
    case "nocorrect":
    case "noglob":
      return skip([]);
    case "time":
      return skip(["-f", "--format", "-o", "--output"]);
    case "nice":
      return skip(["-n", "--adjustment"]);
    case "ionice":
      if (args.some((w) => w.text === "-p" || w.text === "-P")) return "stop";
      return skip(["-c", "-n", "--class", "--classdata"]);
    case "chrt":
      return skip([], { positional: 1 });
    case "taskset":
      if (args.some((w) => w.text.startsWith("-") && w.text.includes("p"))) return "stop";
      return skip([], { positional: 1 });
    case "stdbuf":
      return skip(["-i", "-o", "-e", "--input", "--output", "--error"]);
    case "timeout":
      return skip(["-s", "--signal", "-k", "--kill-after"], { positional: 1 });
    case "xargs":
      return skip([
        "-a",
        "--arg-file",
        "-d",
        "--delimiter",
        "-E",
        "-e",
        "-I",
        "-i",
        "-L",
        "-l",
        "-n",
        "--max-args",
        "-P",
        "--max-procs",
        "-s",
        "--max-chars",
        "--process-slot-var",
      ]);
    case "strace":
    case "ltrace":
      return skip(["-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-S", "-X", "-P"]);
    default:
      return undefined;
  }
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
