/**
 * The approval key: the secret that signs every approval and question answer that travels through the
 * store (docs/interface.md "HTTP API"; SECURITY.md row 3f). A command the model runs may reach the store
 * (a `~/.pgpass`, loopback trust auth, the SQLite file under `sandbox: danger-full-access`); it must never
 * reach this key, so it is kept where the store is not:
 *
 * - `BDSH_APPROVAL_KEY` from the environment (at least 32 characters), never passed to a child
 *   (tools/terminal/child-env.ts lists it with the harness's own secrets); else
 * - `$BDSH_HOME/approval.key`, 32 random bytes in hex, made on first use with mode 0600. `$BDSH_HOME` is
 *   masked from commands and file tools alike.
 *
 * Several servers on one PostgreSQL must share the key: the same `BDSH_APPROVAL_KEY`, or the same home.
 *
 * Invariants:
 * - Made once, whoever races: the new key is written whole to a private temporary file and then hard-linked
 *   to its name, which fails if another process got there first; everyone then reads the one file. A
 *   reader never sees a half-written key.
 * - An existing key file that is not a regular file, or that group or others may read, is refused with a
 *   clear error instead of being trusted (or silently rewritten).
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { ConfigError } from "./load.js";
import { bdshHome } from "./paths.js";

export const APPROVAL_KEY_ENV = "BDSH_APPROVAL_KEY";
export const APPROVAL_KEY_FILE = "approval.key";
const MIN_KEY_CHARS = 32;

/** A bad key is a configuration error (`bdsh: CONFIG: …`, exit 2): the person fixes it, nothing ran. */
export class ApprovalKeyError extends ConfigError {
  constructor(source: string, detail: string) {
    super("", source, detail);
  }
}

/** The approval key: `BDSH_APPROVAL_KEY`, else `$BDSH_HOME/approval.key` (made 0600 on first use). */
export function loadApprovalKey(options: { env?: NodeJS.ProcessEnv; home?: string } = {}): Buffer {
  const env = options.env ?? process.env;
  const fromEnv = env[APPROVAL_KEY_ENV];
  if (fromEnv !== undefined && fromEnv !== "") {
    if (fromEnv.length < MIN_KEY_CHARS)
      throw new ApprovalKeyError(
        `environment variable ${APPROVAL_KEY_ENV}`,
        `must be at least ${MIN_KEY_CHARS} characters (try: openssl rand -hex 32)`,
      );
    return Buffer.from(fromEnv, "utf8");
  }
  const home = options.home ?? bdshHome(env);
  const file = join(home, APPROVAL_KEY_FILE);
  if (!exists(file)) createKeyFile(home, file);
  return readKeyFile(file);
}

function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

function createKeyFile(home: string, file: string): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(temporary, "wx", 0o600);
  try {
    writeSync(fd, `${randomBytes(32).toString("hex")}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, file);
  } catch (error) {
    // Another process made it first: its key is the key.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    unlinkSync(temporary);
  }
}

function readKeyFile(file: string): Buffer {
  const stat = lstatSync(file);
  if (!stat.isFile()) throw new ApprovalKeyError(file, "must be a regular file");
  if ((stat.mode & 0o077) !== 0)
    throw new ApprovalKeyError(
      file,
      `may be read by other users (mode ${(stat.mode & 0o777).toString(8)}): run chmod 600 ${file}`,
    );
  const text = readFileSync(file, "utf8").trim();
  if (text.length < MIN_KEY_CHARS)
    throw new ApprovalKeyError(
      file,
      `holds no key of at least ${MIN_KEY_CHARS} characters: delete it to make a new one`,
    );
  return Buffer.from(text, "utf8");
}
