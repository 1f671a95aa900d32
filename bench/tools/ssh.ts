/**
 * SSH backend per-command overhead (issue 19): the `ssh` environment's `execute` against a plain `ssh2`
 * exec of the same command on the same connection, to a real `sshd` on 127.0.0.1 (test/terminal/sshd.ts).
 *
 * - plain: `client.exec("true")`, wait for close (SshEnvironment.rawExec).
 * - backend: `execute("true")` — the wrapper script (cd, exports, pid marker, process group), the
 *   EnvironmentPolicy, output listeners, the stderr marker filter, exit mapping.
 * - also the local backend's `execute("true")` without bubblewrap, for scale.
 * Rounds alternate plain / backend so drift (load, CPU frequency) hits both alike; the figures are medians
 * and means over all rounds, after a warm-up. The overhead is split into the client side (time in this
 * process between the calls, measured by running the wrapper's script through rawExec) and the remote
 * side (the wrapper's extra shell work).
 *
 *   node --import tsx bench/tools/ssh.ts [rounds]
 */
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { LocalEnvironment } from "../../src/tools/terminal/local.js";
import { policyFor } from "../../src/tools/terminal/policy.js";
import { builtinRegistry } from "../../src/tools/terminal/providers/index.js";
import type { SshEnvironment } from "../../src/tools/terminal/providers/ssh.js";
import {
  ChannelCommand,
  type ChannelHandle,
  PID_MARKER,
  wrapRemoteCommand,
} from "../../src/tools/terminal/remote-shell.js";
import { SSHD_BINARY, SSHD_MISSING, startSshd } from "../../test/terminal/sshd.js";

const ROUNDS = Number(process.argv[2] ?? 300);
if (!SSHD_BINARY) {
  console.log(SSHD_MISSING);
  process.exit(0);
}

const sshd = await startSshd();
const registry = builtinRegistry({
  ssh: {
    host: "127.0.0.1",
    port: sshd.port,
    user: sshd.user,
    identity_file: sshd.identityFile,
    known_hosts: sshd.knownHosts,
    cwd: "/tmp",
  },
});
const ssh = registry.create("ssh", { cwd: "/tmp", stripEnvKeys: [], sessionId: "bench" }) as SshEnvironment;
const local = new LocalEnvironment({ cwd: "/tmp", stripEnvKeys: [], useBubblewrap: false });
const env = { NO_COLOR: "1", TERM: "dumb", PAGER: "cat", GIT_PAGER: "cat" };
const wrapped = wrapRemoteCommand("true", "/tmp", env, { sessionLeader: true });

const timed = async (body: () => Promise<unknown>) => {
  const start = performance.now();
  await body();
  return performance.now() - start;
};
const plain: number[] = [];
const backend: number[] = [];
const script: number[] = [];
const localRuns: number[] = [];
for (let i = 0; i < 20; i++) {
  await ssh.rawExec("true");
  await ssh.execute("true", { cwd: "/tmp", timeoutMs: 10_000, env });
}
for (let i = 0; i < ROUNDS; i++) {
  plain.push(await timed(() => ssh.rawExec("true")));
  backend.push(await timed(() => ssh.execute("true", { cwd: "/tmp", timeoutMs: 10_000, env })));
  script.push(await timed(() => ssh.rawExec(wrapped)));
  if (i % 3 === 0)
    localRuns.push(await timed(() => local.execute("true", { cwd: "/tmp", timeoutMs: 10_000, env })));
}
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const f = (v: number) => `${v.toFixed(3)} ms`;
const rows = [
  ["plain ssh2 exec `true`", plain],
  ["ssh backend execute `true`", backend],
  ["plain ssh2 exec of the wrapper script", script],
  ["local backend execute `true` (no bwrap)", localRuns],
] as const;
console.log(
  `SSH per-command overhead, ${ROUNDS} rounds, sshd on 127.0.0.1, ${cpus().length} cores, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}, node ${process.version}, connections opened: ${ssh.connections}`,
);
console.log("| what | median | mean |");
console.log("| --- | ---: | ---: |");
for (const [name, values] of rows) console.log(`| ${name} | ${f(median(values))} | ${f(mean(values))} |`);
console.log(
  `| overhead: backend − plain | ${f(median(backend) - median(plain))} | ${f(mean(backend) - mean(plain))} |`,
);
const paired = backend.map((value, i) => value - plain[i]!);
console.log(
  `| overhead, paired per round (median of backend_i − plain_i) | ${f(median(paired))} | ${f(mean(paired))} |`,
);
console.log(
  `| of which client side: backend − wrapper script | ${f(median(backend) - median(script))} | ${f(mean(backend) - mean(script))} |`,
);
console.log(
  `| of which remote side: wrapper script − plain | ${f(median(script) - median(plain))} | ${f(mean(script) - mean(plain))} |`,
);

// The client side without the network: what the backend adds in this process per command (policy,
// wrapper script, ChannelCommand with its stderr marker filter and exit mapping), on a channel that
// answers at once.
const policy = policyFor({ cwd: "/tmp", stripEnvKeys: [] });
const CLIENT_ROUNDS = 20_000;
const fakeChannel = (): ChannelHandle => ({
  onStdout: () => {},
  onStderr: (listener) => listener(Buffer.from(`${PID_MARKER}4242\n`)),
  onEnd: (listener) => listener({ exitCode: 0, signal: null }),
});
const clientStart = performance.now();
for (let i = 0; i < CLIENT_ROUNDS; i++) {
  const childEnv = policy.childEnvironment({}, env);
  const script = wrapRemoteCommand("true", "/tmp", childEnv, { sessionLeader: true });
  const running = new ChannelCommand(Promise.resolve(fakeChannel()), async () => {}, 3_000);
  running.onOutput(() => {});
  await running.exited;
  if (script.length === 0) throw new Error("unreachable");
}
const clientMs = (performance.now() - clientStart) / CLIENT_ROUNDS;
console.log(`| client-side work per command, no network (${CLIENT_ROUNDS} rounds) | ${f(clientMs)} | |`);
await ssh.cleanup();
await local.cleanup();
await sshd.stop();
