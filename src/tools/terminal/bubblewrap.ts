/**
 * Bubblewrap argument lists for the sandbox modes (T17).
 *
 * - `read-only`: the whole filesystem read-only.
 * - `workspace-write`: read-only except the workspace (bound read-write).
 * - `danger-full-access`: no bwrap at all.
 * Both sandboxed modes get a fresh `/dev`, a fresh `/proc` in a new PID namespace (so `/proc/self/cwd`
 * leads nowhere outside) and a private `/tmp` that vanishes with the command. The network is shared.
 */
import { spawnSync } from "node:child_process";
import type { SandboxSpec } from "./environment.js";

let probed: boolean | undefined;

/** Whether `bwrap` is installed and can create a sandbox here (probed once per process). */
export function bubblewrapAvailable(): boolean {
  if (probed === undefined) {
    const result = spawnSync(
      "bwrap",
      ["--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--", "true"],
      {
        stdio: "ignore",
        timeout: 5_000,
      },
    );
    probed = result.status === 0;
  }
  return probed;
}

export function bubblewrapArgs(spec: SandboxSpec, cwd: string): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
  // After the /tmp tmpfs, so a workspace under /tmp is still there.
  args.push(spec.mode === "workspace-write" ? "--bind" : "--ro-bind", spec.workspace, spec.workspace);
  args.push("--unshare-pid", "--die-with-parent", "--new-session", "--chdir", cwd);
  return args;
}
