/**
 * A real `sshd` on 127.0.0.1 for the SSH backend tests and the bench (issue 19): a free port, a fresh host
 * key, a fresh client key in `authorized_keys`, a `known_hosts` naming the host key. `.ci/run` installs
 * openssh-server; without the binary the callers skip with a message saying so.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

export const SSHD_BINARY = ["/usr/sbin/sshd", "/usr/local/sbin/sshd"].find((path) => existsSync(path));

export const SSHD_MISSING =
  "sshd (openssh-server) is not installed: the SSH backend tests are skipped; .ci/run must install openssh-server";

export type TestSshd = {
  port: number;
  user: string;
  identityFile: string;
  knownHosts: string;
  dir: string;
  pid: number;
  /** Pids of the per-connection sshd processes (children of the listener). */
  connectionPids(): number[];
  stop(): Promise<void>;
};

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function childrenOf(pid: number): number[] {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .map((line) => Number(line.trim()))
      .filter((n) => Number.isInteger(n) && n > 0);
  } catch {
    return [];
  }
}

export async function startSshd(): Promise<TestSshd> {
  if (!SSHD_BINARY) throw new Error(SSHD_MISSING);
  const dir = mkdtempSync(join(tmpdir(), "bdsh-sshd-"));
  const hostKey = join(dir, "host_ed25519");
  const identityFile = join(dir, "client_ed25519");
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", hostKey]);
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", identityFile]);
  const authorized = join(dir, "authorized_keys");
  writeFileSync(authorized, readFileSync(`${identityFile}.pub`), { mode: 0o600 });
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const port = await freePort();
  const config = join(dir, "sshd_config");
  writeFileSync(
    config,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${authorized}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PubkeyAuthentication yes",
      "PermitRootLogin prohibit-password",
      "StrictModes no",
      "UsePAM no",
      "Subsystem sftp internal-sftp",
      "LogLevel ERROR",
      "",
    ].join("\n"),
  );
  const child: ChildProcess = spawn(SSHD_BINARY, ["-D", "-e", "-f", config], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    log += chunk.toString("utf8");
  });
  // Ready when the port accepts a connection (waits for the condition, no fixed sleep).
  const { connect } = await import("node:net");
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`sshd exited: ${log}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("data", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) break;
    if (attempt > 500) throw new Error(`sshd did not start: ${log}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const hostPub = readFileSync(`${hostKey}.pub`, "utf8").trim().split(/\s+/).slice(0, 2).join(" ");
  const knownHosts = join(dir, "known_hosts");
  writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostPub}\n`);
  return {
    port,
    user: userInfo().username,
    identityFile,
    knownHosts,
    dir,
    pid: child.pid!,
    connectionPids: () => childrenOf(child.pid!),
    stop: async () => {
      for (const pid of childrenOf(child.pid!)) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
