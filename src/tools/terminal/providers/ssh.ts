/**
 * The `ssh` terminal backend (Hermes in-tree `ssh`, seed 000 `terminal-environment-plugin.md`):
 * commands and file operations on another host over one `ssh2` connection per session.
 *
 * Invariants:
 * - One connection per environment (session), opened on first use and reused by every command, file
 *   operation and kill; when it drops, the running commands end with `lost` (their outcome is unknown, and
 *   the result says so) and the next command reconnects.
 * - Authentication: the configured private key, else the agent (`$SSH_AUTH_SOCK` of this process). No
 *   password is ever read.
 * - Host-key checking is on by default: the presented key must be in `known_hosts` (plain or hashed
 *   entries, `[host]:port` for a port other than 22). An unknown host fails with a message that says how to
 *   add the key; a changed key fails louder. `strict_host_key_checking: false` turns it off (user config
 *   only: a project's config may not change `terminal.ssh`).
 * - Nothing of this process's environment is sent: no `env` requests; the T7 variables are exported by the
 *   wrapper script (remote-shell.ts) after the `EnvironmentPolicy` filtered them.
 * - File operations use SFTP on the same connection; `glob` and `grep` run `find`/`grep` remotely.
 * - `isAvailable()` and `probe()` never touch the network: they check the configuration and the key file.
 */
import { createHash, createHmac } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { homedir } from "node:os";
import { join, posix } from "node:path";
import type ssh2 from "ssh2";
import type {
  CreateEnvironmentOptions,
  EnvironmentFiles,
  ExecuteOptions,
  ExecuteResult,
  FileStat,
  RunningCommand,
  SpawnOptions,
  TerminalEnvironment,
  TerminalEnvironmentProvider,
} from "../environment.js";
import { execFiles } from "../exec-files.js";
import { KILL_GRACE_MS } from "../local.js";
import { policyFor } from "../policy.js";
import {
  ChannelCommand,
  type ChannelHandle,
  executeBySpawn,
  RunningCommands,
  shellQuote,
  wrapRemoteCommand,
} from "../remote-shell.js";

type Client = InstanceType<typeof ssh2.Client>;
type Sftp = Parameters<Parameters<Client["sftp"]>[0]>[1];

export type SshSettings = {
  host: string;
  port: number;
  user: string;
  identity_file: string;
  use_agent: boolean;
  known_hosts: string;
  strict_host_key_checking: boolean;
  cwd: string;
  connect_timeout_ms: number;
};

export class HostKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HostKeyError";
  }
}

const hostPattern = (host: string, port: number) => (port === 22 ? host : `[${host}]:${port}`);

/** Whether `known_hosts` text lists `key` (base64 blob) for `host`:`port`; "changed" if only other keys are. */
export function knownHostsVerdict(
  text: string,
  host: string,
  port: number,
  key: string,
): "known" | "unknown" | "changed" | "revoked" {
  const name = hostPattern(host, port);
  let otherKey = false;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const parts = line.split(/\s+/);
    const marker = parts[0]?.startsWith("@") ? parts.shift() : undefined;
    const [hosts, , blob] = parts;
    if (!hosts || !blob) continue;
    const matches = hosts.split(",").some((entry) => {
      if (entry.startsWith("|1|")) {
        const [, , salt, hash] = entry.split("|");
        if (!salt || !hash) return false;
        return createHmac("sha1", Buffer.from(salt, "base64")).update(name).digest("base64") === hash;
      }
      return entry === name;
    });
    if (!matches) continue;
    if (marker === "@revoked" && blob === key) return "revoked";
    if (marker) continue;
    if (blob === key) return "known";
    otherKey = true;
  }
  return otherKey ? "changed" : "unknown";
}

const fingerprint = (key: Buffer) =>
  `SHA256:${createHash("sha256").update(key).digest("base64").replace(/=+$/, "")}`;

export class SshEnvironment implements TerminalEnvironment {
  readonly backend = "ssh";
  readonly remoteCwd: string;
  readonly files: EnvironmentFiles;
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private sftpSession: Promise<Sftp> | undefined;
  private readonly running = new RunningCommands();
  private readonly live = new Set<(lost: string) => void>();
  private closed = false;
  /** How many connections were opened (tests, the bench). */
  connections = 0;

  constructor(
    private readonly settings: SshSettings,
    private readonly options: CreateEnvironmentOptions,
  ) {
    this.remoteCwd = settings.cwd || ".";
    const viaExec = execFiles((command, o = {}) =>
      this.execute(command, {
        cwd: this.remoteCwd,
        timeoutMs: o.timeoutMs ?? 60_000,
        ...(o.signal ? { signal: o.signal } : {}),
      }),
    );
    this.files = {
      stat: (path) => this.sftpStat(path),
      readFile: (path) => this.sftpRead(path),
      writeFile: (path, content) => this.sftpWrite(path, content),
      glob: viaExec.glob,
      grep: viaExec.grep,
    };
  }

  sandboxAvailable(): boolean {
    return false;
  }

  private target(): string {
    return `${this.settings.user ? `${this.settings.user}@` : ""}${hostPattern(this.settings.host, this.settings.port)}`;
  }

  private dropText(): string {
    return `the SSH connection to ${this.target()} dropped while the command ran; its outcome is unknown (it may still be running there, or may have been stopped)`;
  }

  /** The session's connection: opened once, reopened after a drop. */
  connection(): Promise<Client> {
    if (this.closed) return Promise.reject(new Error("the SSH environment was closed"));
    if (this.client) return Promise.resolve(this.client);
    if (!this.connecting) {
      this.connecting = this.connect().finally(() => {
        this.connecting = undefined;
      });
    }
    return this.connecting;
  }

  private async connect(): Promise<Client> {
    // Loaded on the first connection: a process that never uses the ssh backend never loads ssh2.
    const { Client } = (await import("ssh2")).default;
    const { settings } = this;
    const env = this.options.baseEnv ?? process.env;
    let hostKeyProblem: string | undefined;
    const knownHosts = settings.known_hosts || join(homedir(), ".ssh", "known_hosts");
    const config: Parameters<Client["connect"]>[0] = {
      host: settings.host,
      port: settings.port,
      username: settings.user || env.USER || "root",
      readyTimeout: settings.connect_timeout_ms,
      keepaliveInterval: 5_000,
      keepaliveCountMax: 3,
      hostVerifier: (key: Buffer) => {
        if (!settings.strict_host_key_checking) return true;
        const text = existsSync(knownHosts) ? readFileSync(knownHosts, "utf8") : "";
        const verdict = knownHostsVerdict(text, settings.host, settings.port, key.toString("base64"));
        if (verdict === "known") return true;
        const where = hostPattern(settings.host, settings.port);
        hostKeyProblem =
          verdict === "unknown"
            ? `the SSH host key of ${where} (${fingerprint(key)}) is not in ${knownHosts}: first connection to this host. Check the fingerprint, then add it with \`ssh-keyscan -p ${settings.port} ${settings.host} >> ${knownHosts}\` (or set terminal.ssh.strict_host_key_checking: false in your own config)`
            : verdict === "changed"
              ? `the SSH host key of ${where} CHANGED (now ${fingerprint(key)}; ${knownHosts} lists another): refusing to connect; someone may be intercepting the connection`
              : `the SSH host key of ${where} is revoked in ${knownHosts}: refusing to connect`;
        return false;
      },
    };
    if (settings.identity_file) config.privateKey = readFileSync(settings.identity_file);
    else if (settings.use_agent && env.SSH_AUTH_SOCK) config.agent = env.SSH_AUTH_SOCK;
    // Small request/response packets: without TCP_NODELAY every channel open waits on delayed ACKs.
    const sock = connect({ host: settings.host, port: settings.port });
    sock.setNoDelay(true);
    config.sock = sock;
    return new Promise((resolve, reject) => {
      const client = new Client();
      let ready = false;
      client.once("ready", () => {
        ready = true;
        this.client = client;
        this.sftpSession = undefined;
        this.connections += 1;
        resolve(client);
      });
      client.on("error", (error: Error) => {
        if (!ready) {
          reject(
            new Error(
              hostKeyProblem ??
                `ssh: cannot connect to ${this.target()}: ${error.message.replace(/\n.*/s, "")}`,
            ),
          );
        }
      });
      client.once("close", () => {
        if (this.client === client) {
          this.client = undefined;
          this.sftpSession = undefined;
        }
        const lost = this.dropText();
        for (const end of [...this.live]) end(lost);
        if (!ready) reject(new Error(hostKeyProblem ?? `ssh: connection to ${this.target()} closed`));
      });
      client.connect(config);
    });
  }

  /** One exec channel for `script`: its output and end. */
  private async channel(script: string): Promise<ChannelHandle> {
    const client = await this.connection();
    const stream = await new Promise<ssh2.ClientChannel>((resolve, reject) =>
      client.exec(script, (error, channel) => (error ? reject(error) : resolve(channel))),
    );
    type End = { exitCode: number | null; signal: string | null; lost?: string };
    let endListener: ((end: End) => void) | undefined;
    let ended: End | undefined;
    let exit: { code: number | null; signal: string | null } | undefined;
    const end = (value: End) => {
      if (ended) return;
      ended = value;
      this.live.delete(onLost);
      endListener?.(value);
    };
    const onLost = (lost: string) => end({ exitCode: null, signal: null, lost });
    this.live.add(onLost);
    stream.on("exit", (code: number | null, signal?: string) => {
      exit = { code: typeof code === "number" ? code : null, signal: signal ?? null };
    });
    // A channel that closes without an exit status broke with its connection: the connection's close
    // (which may come a moment later) reports it as lost.
    stream.once("close", () => {
      if (exit) end({ exitCode: exit.code, signal: exit.signal });
      else
        setImmediate(() =>
          end({
            exitCode: null,
            signal: null,
            lost:
              this.client === client
                ? `the SSH channel to ${this.target()} closed without an exit status; the command's outcome is unknown`
                : this.dropText(),
          }),
        );
    });
    return {
      onStdout: (listener) => stream.on("data", listener),
      onStderr: (listener) => stream.stderr.on("data", listener),
      onEnd: (listener) => {
        endListener = listener;
        if (ended) listener(ended);
      },
    };
  }

  /** Runs `script` to its end, ignoring its output (the kill). */
  private async oneOff(script: string): Promise<void> {
    const channel = await this.channel(script);
    await new Promise<void>((resolve) => {
      channel.onStdout(() => {});
      channel.onStderr(() => {});
      channel.onEnd(() => resolve());
    });
  }

  spawn(command: string, options: SpawnOptions): RunningCommand {
    const env = policyFor(this.options).childEnvironment({}, options.env ?? {});
    const cwd = options.cwd || this.remoteCwd;
    const running = new ChannelCommand(
      this.channel(wrapRemoteCommand(command, cwd, env, { sessionLeader: true })),
      (script) => this.oneOff(script),
      KILL_GRACE_MS,
    );
    this.running.track(running);
    return running;
  }

  execute(command: string, options: ExecuteOptions): Promise<ExecuteResult> {
    return executeBySpawn(this.spawn(command, options), options.timeoutMs, options.signal);
  }

  /** The bench: a command on the same connection without the wrapper, the policy or the listeners. */
  async rawExec(command: string): Promise<number | null> {
    const client = await this.connection();
    return new Promise((resolve, reject) =>
      client.exec(command, (error, stream) => {
        if (error) return reject(error);
        let code: number | null = null;
        stream.on("exit", (c: number | null) => {
          code = c;
        });
        stream.on("data", () => {});
        stream.stderr.on("data", () => {});
        stream.once("close", () => resolve(code));
      }),
    );
  }

  private sftp(): Promise<Sftp> {
    if (!this.sftpSession) {
      const session = this.connection().then(
        (client) =>
          new Promise<Sftp>((resolve, reject) =>
            client.sftp((error, sftp) => (error ? reject(error) : resolve(sftp))),
          ),
      );
      session.catch(() => {
        if (this.sftpSession === session) this.sftpSession = undefined;
      });
      this.sftpSession = session;
    }
    return this.sftpSession;
  }

  private resolvePath(path: string): string {
    return posix.isAbsolute(path) ? path : posix.join(this.remoteCwd, path);
  }

  private async sftpStat(path: string): Promise<FileStat | undefined> {
    const sftp = await this.sftp();
    return new Promise((resolve) =>
      sftp.stat(this.resolvePath(path), (error, stats) => {
        if (error) return resolve(undefined);
        resolve({
          kind: stats.isDirectory() ? "directory" : stats.isFile() ? "file" : "other",
          size: stats.size,
          mtimeMs: stats.mtime * 1000,
        });
      }),
    );
  }

  private async sftpRead(path: string): Promise<Buffer> {
    const sftp = await this.sftp();
    return new Promise((resolve, reject) =>
      sftp.readFile(this.resolvePath(path), (error, data) => (error ? reject(error) : resolve(data))),
    );
  }

  /** A temporary sibling, then the OpenSSH POSIX rename over the target (atomic for readers). */
  private async sftpWrite(path: string, content: string): Promise<void> {
    const target = this.resolvePath(path);
    const directory = posix.dirname(target);
    const made = await this.execute(`mkdir -p -- ${shellQuote(directory)}`, {
      cwd: this.remoteCwd,
      timeoutMs: 30_000,
    });
    if (made.exitCode !== 0) throw new Error(made.output.trim() || `cannot create "${directory}"`);
    const sftp = await this.sftp();
    const temporary = posix.join(directory, `.${posix.basename(target)}.${Date.now().toString(36)}.tmp`);
    const mode = await new Promise<number | undefined>((resolve) =>
      sftp.stat(target, (error, stats) => resolve(error ? undefined : stats.mode & 0o7777)),
    );
    await new Promise<void>((resolve, reject) =>
      sftp.writeFile(temporary, content, mode === undefined ? {} : { mode }, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    await new Promise<void>((resolve, reject) =>
      sftp.ext_openssh_rename(temporary, target, (error) => {
        if (!error) return resolve();
        sftp.unlink(temporary, () => reject(error));
      }),
    );
  }

  async cleanup(): Promise<void> {
    await this.running.killAll();
    this.closed = true;
    this.client?.end();
    this.client = undefined;
  }
}

/** The settings `terminal.ssh` gives, with the schema's defaults for anything missing. */
export function sshSettings(slice: Record<string, unknown> | undefined): SshSettings {
  const s = (slice ?? {}) as Partial<SshSettings>;
  return {
    host: s.host ?? "",
    port: s.port ?? 22,
    user: s.user ?? "",
    identity_file: s.identity_file ?? "",
    use_agent: s.use_agent ?? true,
    known_hosts: s.known_hosts ?? "",
    strict_host_key_checking: s.strict_host_key_checking ?? true,
    cwd: s.cwd ?? "",
    connect_timeout_ms: s.connect_timeout_ms ?? 10_000,
  };
}

/** The provider; `settings` is the config's `terminal.ssh` (for availability and doctor). */
export function sshProvider(
  settings: SshSettings,
  env: NodeJS.ProcessEnv = process.env,
): TerminalEnvironmentProvider {
  const problem = (): string | undefined => {
    if (!settings.host) return "terminal.ssh.host is not set";
    if (settings.identity_file && !existsSync(settings.identity_file))
      return `terminal.ssh.identity_file ${settings.identity_file} does not exist`;
    if (!settings.identity_file && !(settings.use_agent && env.SSH_AUTH_SOCK))
      return "no key: set terminal.ssh.identity_file, or run an ssh agent ($SSH_AUTH_SOCK) with use_agent";
    return undefined;
  };
  return {
    name: "ssh",
    displayName: "SSH",
    description: "Run commands and file operations on another host over SSH (one connection per session).",
    isRemote: true,
    isContainer: false,
    cachePathBase: null,
    stripEnvKeys: [],
    skipContainerGuards: false,
    sessionIsolatedWhenNonpersistent: false,
    get envDescription() {
      return `Commands and file tools run on the remote host ${hostPattern(settings.host, settings.port)} over SSH${settings.cwd ? `, in ${settings.cwd}` : ""}; paths are that host's, not this machine's.`;
    },
    isAvailable: () => problem() === undefined,
    probe: () => {
      const why = problem();
      return why
        ? { ok: false, detail: why }
        : { ok: true, detail: `configured for ${hostPattern(settings.host, settings.port)}` };
    },
    doctorChecks: () => {
      const why = problem();
      return [
        why
          ? { status: "fail", name: "backend ssh", detail: `${why}; ${sshSetup}` }
          : {
              status: settings.strict_host_key_checking ? "ok" : "warn",
              name: "backend ssh",
              detail: `${hostPattern(settings.host, settings.port)}${settings.strict_host_key_checking ? "" : ", host-key checking OFF"}`,
            },
      ];
    },
    setupInstructions: () => sshSetup,
    createEnvironment: ({ containerConfig, ...options }) =>
      new SshEnvironment(containerConfig ? sshSettings(containerConfig) : settings, {
        ...options,
        containerConfig,
      }),
  };
}

const sshSetup =
  "set terminal.backend: ssh and terminal.ssh.host (port, user, identity_file or an agent, cwd) in your config, and add the host's key to ~/.ssh/known_hosts (ssh-keyscan)";
