/**
 * The in-sandbox half of `sandbox_network: proxy`. bwrap's `--unshare-net` leaves a command only a
 * loopback of its own, so the harness's proxy (egress-proxy.ts) cannot be reached by address; its unix
 * socket is bound into the sandbox instead, and this small Node program, started by bwrap in place of the
 * command, listens on the sandbox's own 127.0.0.1, relays every connection to that socket byte for byte,
 * and runs the command with `HTTP_PROXY`/`HTTPS_PROXY` (both cases) naming it.
 *
 * Invariants:
 * - The command starts only after the relay listens, so its first request finds the proxy.
 * - The relay decides nothing: every allow or refusal is the harness's, outside the sandbox.
 * - The relay's exit is the command's: its exit code, or the same signal re-raised; SIGTERM, SIGINT and
 *   SIGHUP are passed on to the command. The relay is the sandbox's main process, so when the command ends
 *   the namespace (and anything the command left running) ends with it, as without the relay.
 * - `NO_PROXY` is emptied: every request goes through the proxy or nowhere.
 * - The source is a CommonJS string run with `node -e`, so it needs no file on disk (built or not).
 */
const RELAY_SOURCE = `
const net = require("node:net");
const { spawn } = require("node:child_process");
const [socketPath, ...command] = process.argv.slice(1);
const relay = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  const fail = () => { client.destroy(); upstream.destroy(); };
  client.on("error", fail);
  upstream.on("error", fail);
  client.pipe(upstream);
  upstream.pipe(client);
});
relay.listen(0, "127.0.0.1", () => {
  const url = "http://127.0.0.1:" + relay.address().port;
  const env = { ...process.env, HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: "", no_proxy: "" };
  const child = spawn(command[0], command.slice(1), { stdio: "inherit", env });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("error", (error) => { process.stderr.write(String(error.message) + "\\n"); process.exit(127); });
  child.on("exit", (code, signal) => {
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); }
    else process.exit(code === null ? 1 : code);
  });
});
`;

/** The argv bwrap runs instead of `argv`: the relay (with this Node), then the command. */
export function relayArgv(socketPath: string, argv: readonly string[]): string[] {
  return [process.execPath, "-e", RELAY_SOURCE, socketPath, ...argv];
}
