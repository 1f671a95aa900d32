/**
 * The default file operations of an environment, built on its `execute` (Hermes: subclassing
 * `BaseEnvironment` inherits the shared file plumbing): what `read`, `write`, `edit`, `glob` and `grep`
 * use on a backend that does not provide its own (SSH replaces them with SFTP).
 *
 * Invariants:
 * - Only POSIX tools the remote side is expected to have: `stat`, `base64`, `find`, `grep`, `mkdir`, `mv`.
 * - Every path is single-quoted; content travels base64-encoded, in chunks below the 128 KiB limit of one
 *   argument, into a temporary sibling that is renamed over the target (atomic for a reader).
 * - `glob` filters `find`'s listing with the same glob rules as here (`globToRegExp`), skipping `.git`.
 */
import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import type { EnvironmentFiles, FileStat, GrepOptions } from "./environment.js";
import { shellQuote } from "./remote-shell.js";

export type Exec = (
  command: string,
  options?: { timeoutMs?: number; signal?: AbortSignal },
) => Promise<{ stdout: string; stderr: string; exitCode: number | null; lost?: string }>;

const CHUNK = 64 * 1024;

/** A glob over `/`-separated relative paths: `**` any depth, `*` and `?` within a part, `{a,b}`. */
export function globToRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === "*") {
      if (glob[i + 1] === "*") {
        const slash = glob[i + 2] === "/";
        out += slash ? "(?:.*/)?" : ".*";
        i += slash ? 2 : 1;
      } else out += "[^/]*";
    } else if (ch === "?") out += "[^/]";
    else if (ch === "{") {
      const close = glob.indexOf("}", i);
      if (close < 0) out += "\\{";
      else {
        out += `(?:${glob
          .slice(i + 1, close)
          .split(",")
          .map((part) => globToRegExp(part).source.slice(1, -1))
          .join("|")})`;
        i = close;
      }
    } else out += ch.replace(/[\\^$.|+()[\]{}]/g, "\\$&");
  }
  // A pattern without a slash matches the file name at any depth, as ripgrep's --glob does.
  return new RegExp(glob.includes("/") ? `^${out}$` : `^(?:.*/)?${out}$`);
}

export function execFiles(exec: Exec): EnvironmentFiles {
  const run = async (command: string, signal?: AbortSignal) => {
    const result = await exec(command, { timeoutMs: 60_000, ...(signal ? { signal } : {}) });
    if (result.lost) throw new Error(result.lost);
    return result;
  };
  return {
    async stat(path): Promise<FileStat | undefined> {
      const result = await run(`stat -L -c '%F\t%s\t%Y' -- ${shellQuote(path)} 2>/dev/null`);
      if (result.exitCode !== 0) return undefined;
      const [type, size, mtime] = result.stdout.trim().split("\t");
      return {
        kind: type === "directory" ? "directory" : type?.includes("file") ? "file" : "other",
        size: Number(size),
        mtimeMs: Number(mtime) * 1000,
      };
    },
    async readFile(path) {
      const result = await run(`base64 -w0 -- ${shellQuote(path)}`);
      if (result.exitCode !== 0) throw new Error(result.stderr.trim() || `cannot read "${path}"`);
      return Buffer.from(result.stdout.trim(), "base64");
    },
    async writeFile(path, content) {
      const temporary = posix.join(
        posix.dirname(path),
        `.${posix.basename(path)}.${randomBytes(6).toString("hex")}.tmp`,
      );
      const encoded = Buffer.from(content, "utf8").toString("base64");
      const first = await run(
        `mkdir -p -- ${shellQuote(posix.dirname(path))} && : > ${shellQuote(temporary)}`,
      );
      if (first.exitCode !== 0) throw new Error(first.stderr.trim() || `cannot write "${path}"`);
      for (let at = 0; at < encoded.length; at += CHUNK) {
        const part = encoded.slice(at, at + CHUNK);
        const step = await run(`printf '%s' ${shellQuote(part)} | base64 -d >> ${shellQuote(temporary)}`);
        if (step.exitCode !== 0) {
          await run(`rm -f -- ${shellQuote(temporary)}`);
          throw new Error(step.stderr.trim() || `cannot write "${path}"`);
        }
      }
      // Keep the target's mode, as the local atomic write does.
      const done = await run(
        `{ [ -e ${shellQuote(path)} ] && chmod --reference=${shellQuote(path)} ${shellQuote(temporary)}; true; } && mv -f -- ${shellQuote(temporary)} ${shellQuote(path)}`,
      );
      if (done.exitCode !== 0) throw new Error(done.stderr.trim() || `cannot write "${path}"`);
    },
    async glob(root, pattern, signal) {
      const result = await run(
        `find ${shellQuote(root)} -name .git -prune -o -type f -printf '%T@\\t%P\\n' 2>/dev/null; true`,
        signal,
      );
      const matcher = globToRegExp(pattern);
      const out: { path: string; mtimeMs: number }[] = [];
      for (const line of result.stdout.split("\n")) {
        const tab = line.indexOf("\t");
        if (tab < 0) continue;
        const path = line.slice(tab + 1);
        if (matcher.test(path)) out.push({ path, mtimeMs: Number(line.slice(0, tab)) * 1000 });
      }
      return out;
    },
    async grep(path, pattern, options: GrepOptions = {}) {
      const flags = ["-rnHIE", "--exclude-dir=.git", ...(options.ignoreCase ? ["-i"] : [])];
      if (options.glob) flags.push(`--include=${shellQuote(options.glob)}`);
      const result = await run(
        `grep ${flags.join(" ")} -e ${shellQuote(pattern)} -- ${shellQuote(path)}`,
        options.signal,
      );
      if (result.exitCode === 2) throw new Error(result.stderr.trim() || "grep failed");
      return result.stdout.split("\n").filter(Boolean);
    },
  };
}
