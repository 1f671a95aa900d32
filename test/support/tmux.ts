/**
 * Drives a real program in a real pseudo-terminal (tmux), as a person would: keys in, the screen read back
 * with `capture-pane` (issue 15 acceptance). Each instance has its own tmux server socket, so parallel test
 * files never share a server.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "./wait.js";

export function tmuxAvailable(): boolean {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

export class TmuxSession {
  private readonly socket: string;
  private readonly name = "t";

  private constructor(socket: string) {
    this.socket = socket;
  }

  /** Starts `argv` in `cwd` with exactly `env` (plus PATH), in a `columns` × `rows` terminal. */
  static start(
    argv: string[],
    options: { env: NodeJS.ProcessEnv; cwd: string; columns?: number; rows?: number },
  ) {
    const dir = mkdtempSync(join(tmpdir(), "bdsh-tmux-"));
    const script = join(dir, "run.sh");
    const exports = Object.entries({ PATH: process.env.PATH, TERM: "xterm-256color", ...options.env })
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `export ${k}=${shellQuote(String(v))}`);
    writeFileSync(
      script,
      [
        "#!/bin/sh",
        ...exports,
        `cd ${shellQuote(options.cwd)}`,
        `${argv.map(shellQuote).join(" ")}`,
        `echo "[exited $?]"`,
        "sleep 600",
        "",
      ].join("\n"),
    );
    chmodSync(script, 0o755);
    const session = new TmuxSession(join(dir, "tmux.sock"));
    session.tmux(
      "new-session",
      "-d",
      "-s",
      session.name,
      "-x",
      String(options.columns ?? 120),
      "-y",
      String(options.rows ?? 40),
      `env -i sh ${shellQuote(script)}`,
    );
    return session;
  }

  tmux(...args: string[]): string {
    return execFileSync("tmux", ["-S", this.socket, ...args], { encoding: "utf8" });
  }

  /** The visible screen, as plain text. */
  screen(): string {
    return this.tmux("capture-pane", "-p", "-t", this.name);
  }

  /** Literal text, as typed. */
  type(text: string): void {
    this.tmux("send-keys", "-t", this.name, "-l", text);
  }

  /** Named keys (`Enter`, `Escape`, `C-c`, `Up`). */
  keys(...keys: string[]): void {
    this.tmux("send-keys", "-t", this.name, ...keys);
  }

  /** Pastes `text` as a terminal would (bracketed, when the program asked for it). */
  paste(text: string): void {
    this.tmux("set-buffer", "--", text);
    this.tmux("paste-buffer", "-p", "-d", "-t", this.name);
  }

  /** The first screen `predicate` accepts; `timeoutMs` is a failure guard (scaled, see wait.ts). */
  async waitFor(predicate: (screen: string) => boolean, what: string, timeoutMs = 30_000): Promise<string> {
    let last = "";
    await waitUntil(
      () => {
        last = this.screen();
        return predicate(last);
      },
      what,
      { timeoutMs, everyMs: 50, describe: () => `the screen was:\n${last}` },
    );
    return last;
  }

  waitForText(text: string, timeoutMs?: number): Promise<string> {
    return this.waitFor((s) => s.includes(text), JSON.stringify(text), timeoutMs);
  }

  kill(): void {
    try {
      this.tmux("kill-server");
    } catch {
      // already gone
    }
  }
}
