/**
 * The file tools on a backend with its own files (SSH over SFTP, plugins over `execute`): the
 * same texts and checks as on this host, applied to the environment's `files`.
 *
 * Invariants:
 * - Paths are POSIX paths of the remote side, resolved against the environment's working directory.
 * - The sandbox mode is applied lexically to the remote path (no symlink resolution is possible from
 *   here): `read-only` writes nothing, `workspace-write` writes only under the remote working directory and
 *   never into `.bdsh/` or a git control path (git-control.ts `isGitControlPath`: `.git` itself, its hooks,
 *   config, commondir, ...) at any depth; `danger-full-access` anywhere.
 * - Read-before-write (T11, C18) holds remotely too: a read records the remote file's size and mtime, and a
 *   write or edit is refused when the file was not read or changed since.
 */
import { posix } from "node:path";
import type { EnvironmentFiles } from "../terminal/environment.js";
import type { ToolExec } from "../types.js";
import type { FileVersion } from "./file-observations.js";
import { isGitControlPath } from "./git-control.js";

export type RemoteFiles = { files: EnvironmentFiles; root: string };

/** The environment's files when they are not this host's, with the root relative paths resolve against. */
export function remoteFiles(exec: ToolExec): RemoteFiles | undefined {
  const terminal = exec.services.get("terminal");
  if (!terminal?.files) return undefined;
  return { files: terminal.files, root: terminal.remoteCwd ?? exec.cwd };
}

/**
 * `path` on the remote side: absolute as given, else under the environment's working directory. Never
 * resolved against this process's cwd (a remote root may be relative to the login directory, like `.`).
 */
export function remoteJoin(root: string, path: string): string {
  return posix.normalize(posix.isAbsolute(path) ? path : posix.join(root, path));
}

export const remotePath = (remote: RemoteFiles, path: string) => remoteJoin(remote.root, path);

const observationKey = (path: string) => `remote:${path}`;

export async function remoteVersion(remote: RemoteFiles, path: string): Promise<FileVersion | undefined> {
  const info = await remote.files.stat(path);
  return info?.kind === "file"
    ? { mtimeNs: BigInt(Math.round(info.mtimeMs * 1e6)), size: BigInt(info.size) }
    : undefined;
}

export async function recordRemoteRead(exec: ToolExec, remote: RemoteFiles, path: string): Promise<void> {
  const version = await remoteVersion(remote, path);
  if (version) exec.services.get("fileObservations")?.record(observationKey(path), version);
}

/** The sandbox and read-before-write checks of `write`/`edit` on a remote path; returns whether it exists. */
export async function guardRemoteModification(
  exec: ToolExec,
  remote: RemoteFiles,
  path: string,
  verb: "write" | "edit",
): Promise<boolean> {
  const denied = `cannot write "${path}": [sandbox: file access denied under ${exec.sandbox} mode]`;
  if (exec.sandbox === "read-only") throw new Error(denied);
  if (exec.sandbox === "workspace-write") {
    const inside = posix.relative(remote.root, path);
    const under = inside === "" || (!inside.startsWith("..") && !posix.isAbsolute(inside));
    // `.bdsh` and git's control paths are refused at every depth, as locally (protected-paths.ts).
    const components = inside.split("/");
    if (!under || components.includes(".bdsh") || isGitControlPath(components)) throw new Error(denied);
  }
  const current = await remoteVersion(remote, path);
  if (!current) return false;
  const seen = exec.services.require("fileObservations").seen(observationKey(path));
  if (!seen) throw new Error(`cannot modify "${path}": file has not been read — read the file, then retry`);
  if (seen.mtimeNs !== current.mtimeNs || seen.size !== current.size)
    throw new Error(
      `cannot ${verb} "${path}": file changed since it was read — re-read the file, then retry`,
    );
  return true;
}

export async function writeRemote(
  exec: ToolExec,
  remote: RemoteFiles,
  path: string,
  content: string,
): Promise<void> {
  await remote.files.writeFile(path, content);
  await recordRemoteRead(exec, remote, path);
}
