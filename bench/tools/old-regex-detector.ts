/**
 * BASELINE PEER for bench/tools/detector.ts only — not used by the harness.
 *
 * The dangerous-command detector as it was before issue 14 finding 6 (regexes over normalised text),
 * copied unchanged from `git show 8e46ea5:src/tools/guards/dangerous-commands.ts` so the bench can
 * print the new detector's figures against it in the same run.
 */
/**
 * Dangerous-command detection (Hermes `DANGEROUS_PATTERNS`): commands that need the user's approval.
 *
 * The command is normalised first, so quoting and wrappers do not hide it:
 * - `\`-newline continuations joined, quotes and backslash escapes removed, whitespace collapsed;
 * - split into simple commands at `;`, `&&`, `||`, `|`, `&`, newlines, `$(`, backticks and parentheses;
 * - each simple command loses leading `VAR=value` assignments and the wrappers `sudo`, `doas`, `env`,
 *   `command`, `exec`, `nohup`, `time`, `nice`, `timeout`, `xargs`, `sh -c`/`bash -c` (whose argument is
 *   itself split again) and a `/usr/bin/`-style directory on the program name.
 * Patterns then match one simple command (program first), or the whole normalised line (pipelines such as
 * `curl … | sh`, fork bombs, SQL).
 *
 * Each pattern has a stable `key`: session approvals and `command_allowlist` entries are keys.
 */

export type DangerousMatch = { key: string; description: string };

type Pattern = DangerousMatch & { scope: "command" | "line"; test: RegExp };

/** A path an `rm -r`, `chmod -R` or `chown -R` must not take lightly: roots, home, `.`/`..`, `*`, a bare `$VAR`. */
const BROAD = String.raw`(?:/|/\*|~|~/|~/\*|\$\{?HOME\}?/?\*?|\.|\./|\./\*|\.\.|\.\./|\.\./\*|\*|/[A-Za-z0-9_.-]+/?\*?|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/?\*?)`;
const END = String.raw`(?=\s|$)`;

const PATTERNS: Pattern[] = [
  {
    key: "recursive-delete",
    description: "recursive delete of a broad path",
    scope: "command",
    test: new RegExp(
      String.raw`^rm\s+(?:\S+\s+)*?(?:-[A-Za-z]*[rR][A-Za-z]*|--recursive)\s+(?:\S+\s+)*?${BROAD}${END}`,
    ),
  },
  {
    key: "recursive-delete",
    description: "rm --no-preserve-root",
    scope: "command",
    test: /^rm\s.*--no-preserve-root/,
  },
  {
    key: "find-delete",
    description: "find -delete from a root or home directory",
    scope: "command",
    test: /^find\s+(?:\/|~|\$\{?HOME\}?|\/[A-Za-z0-9_.-]+)\/?\s.*-delete\b/,
  },
  {
    key: "disk-format",
    description: "formatting or wiping a disk",
    scope: "command",
    test: /^(?:mkfs(?:\.\w+)?|mke2fs|mkswap|wipefs|fdisk|sfdisk|parted|sgdisk|blkdiscard)\b/,
  },
  {
    key: "disk-write",
    description: "dd onto a device",
    scope: "command",
    test: /^dd\s.*\bof=\/dev\/(?!null\b|zero\b|stdout\b|stderr\b)/,
  },
  {
    key: "disk-write",
    description: "redirect onto a block device",
    scope: "line",
    test: />\s*\/dev\/(?:sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|disk\d)/,
  },
  {
    key: "sql-drop",
    description: "SQL DROP",
    scope: "line",
    test: /\bDROP\s+(?:TABLE|DATABASE|SCHEMA|INDEX|VIEW)\b/i,
  },
  {
    key: "sql-truncate",
    description: "SQL TRUNCATE",
    scope: "line",
    test: /\bTRUNCATE\s+(?:TABLE\s+)?[A-Za-z_"]/i,
  },
  {
    key: "sql-delete-all",
    description: "SQL DELETE without WHERE",
    scope: "line",
    test: /\bDELETE\s+FROM\s+[^\s;&|)]+\s*(?:;|$|&|\||\))/i,
  },
  { key: "etc-write", description: "writing under /etc", scope: "line", test: />>?\s*\/etc\// },
  {
    key: "etc-write",
    description: "writing under /etc",
    scope: "command",
    test: /^(?:tee\s+(?:-a\s+)?\/etc\/|(?:cp|mv|install|ln|rsync)\s.*\s\/etc(?:\/\S*)?$|sed\s+(?:\S+\s+)*-i\S*\s.*\/etc\/|truncate\s.*\/etc\/)/,
  },
  {
    key: "service-stop",
    description: "stopping or disabling a service",
    scope: "command",
    test: /^(?:systemctl\s+(?:\S+\s+)*?(?:stop|disable|mask|kill|isolate)\b|service\s+\S+\s+stop\b|rc-service\s+\S+\s+stop\b)/,
  },
  {
    key: "power",
    description: "shutting down or rebooting",
    scope: "command",
    test: /^(?:shutdown|reboot|halt|poweroff|init\s+[06]|systemctl\s+(?:poweroff|reboot|halt))\b/,
  },
  {
    key: "remote-code",
    description: "piping a download into a shell",
    scope: "line",
    test: /\b(?:curl|wget|fetch)\b[^|;&]*\|\s*(?:sudo\s+)?(?:env\s+)?(?:\S*\/)?(?:ba|z|da|k|fi)?sh\b/,
  },
  {
    key: "remote-code",
    description: "piping a download into an interpreter",
    scope: "line",
    test: /\b(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:python[0-9.]*|perl|ruby|node)\b/,
  },
  {
    key: "remote-code",
    description: "running a downloaded script",
    scope: "line",
    test: /\b(?:ba|z|da)?sh\s+(?:-c\s+)?(?:<\(|\$\()\s*(?:curl|wget)\b/,
  },
  { key: "fork-bomb", description: "fork bomb", scope: "line", test: /(\w+|:)\(\)\{\1\|\1&\};\1/ },
  {
    key: "mass-kill",
    description: "killing every process",
    scope: "command",
    test: /^kill\s+(?:-s\s+\S+\s+|-\S+\s+)*(?:--\s+)?-1$/,
  },
  {
    key: "mass-kill",
    description: "killing processes by name",
    scope: "command",
    test: /^(?:pkill|killall|killall5)\b/,
  },
  {
    key: "chmod-world",
    description: "recursive world-writable chmod",
    scope: "command",
    test: /^chmod\s+(?:\S+\s+)*?(?:-[A-Za-z]*R[A-Za-z]*|--recursive)\s+(?:\S+\s+)*?(?:0?777|a\+rwx|ugo\+rwx|o\+w)\b/,
  },
  {
    key: "chmod-root",
    description: "recursive chmod of a broad path",
    scope: "command",
    test: new RegExp(
      String.raw`^chmod\s+(?:\S+\s+)*?(?:-[A-Za-z]*R[A-Za-z]*|--recursive)\s+\S+\s+${BROAD}${END}`,
    ),
  },
  {
    key: "chown-root",
    description: "recursive chown of a broad path",
    scope: "command",
    test: new RegExp(
      String.raw`^chown\s+(?:\S+\s+)*?(?:-[A-Za-z]*R[A-Za-z]*|--recursive)\s+\S+\s+${BROAD}${END}`,
    ),
  },
  {
    key: "force-push-main",
    description: "force-pushing main or master",
    scope: "command",
    test: /^git\s+(?:\S+\s+)*?push\b(?=.*\s(?:-f|--force|--force-with-lease(?:=\S*)?)(?:\s|$))(?=.*\s\+?(?:\S+:)?(?:refs\/heads\/)?(?:main|master)(?:\s|$))/,
  },
  {
    key: "crontab-remove",
    description: "removing the crontab",
    scope: "command",
    test: /^crontab\s+(?:\S+\s+)*-r\b/,
  },
  {
    key: "firewall-flush",
    description: "flushing the firewall",
    scope: "command",
    test: /^(?:iptables|ip6tables|nft)\s+(?:\S+\s+)*?(?:-F|--flush|flush\s+ruleset)\b/,
  },
];

/** Wrapper programs and their options; the listed short options take a value (`sudo -u root`). */
const WRAPPERS =
  /^(?:sudo|doas|command|exec|nohup|time|builtin|eval|xargs)(?:\s+-[ugCDhprtUaIn]\s+\S+|\s+-[A-Za-z0-9-]+)*\s+/;
const ENV_WRAPPER = /^env(?:\s+(?:-[A-Za-z-]+|[A-Za-z_][A-Za-z0-9_]*=\S*))*\s+/;
const NICE_WRAPPER = /^(?:nice|ionice|timeout|stdbuf)(?:\s+-\S+(?:\s+\d+\S*)?)*(?:\s+\d+\S*)?\s+/;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=\S*\s+/;
const SHELL_C = /^(?:\S*\/)?(?:ba|z|da|k)?sh\s+(?:-\w+\s+)*-c\s+/;
const PROGRAM_DIR = /^(?:\/usr)?(?:\/local)?\/s?bin\//;

/** The command as the patterns see it: one line, no quotes, no escapes, single spaces. */
export function normalizeCommand(command: string): string {
  return command
    .replace(/\\\r?\n/g, " ")
    .replace(/\\(.)/g, "$1")
    .replace(/["']/g, "")
    .replace(/[ \t]+/g, " ")
    .trim();
}

/** The simple commands inside a normalised line, wrappers removed (see the header). */
export function simpleCommands(line: string): string[] {
  const out: string[] = [];
  for (const raw of line.split(/\|\||&&|[;|&\n`()]|\$\(/)) {
    let segment = raw.trim();
    for (let guard = 0; guard < 16; guard += 1) {
      const next = segment
        .replace(ASSIGNMENT, "")
        .replace(ENV_WRAPPER, "")
        .replace(NICE_WRAPPER, "")
        .replace(WRAPPERS, "")
        .replace(PROGRAM_DIR, "");
      if (SHELL_C.test(next)) {
        out.push(...simpleCommands(next.replace(SHELL_C, "")));
        segment = "";
        break;
      }
      if (next === segment) break;
      segment = next;
    }
    if (segment !== "") out.push(segment);
  }
  return out;
}

export function detectDangerousCommand(command: string): DangerousMatch | undefined {
  const line = normalizeCommand(command);
  const compact = line.replace(/\s+/g, "");
  const commands = simpleCommands(line);
  for (const pattern of PATTERNS) {
    const hit =
      pattern.scope === "line"
        ? pattern.test.test(line) || (pattern.key === "fork-bomb" && pattern.test.test(compact))
        : commands.some((simple) => pattern.test.test(simple));
    if (hit) return { key: pattern.key, description: pattern.description };
  }
  return undefined;
}
