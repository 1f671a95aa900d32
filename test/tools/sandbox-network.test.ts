/**
 * `sandbox_network` under real bubblewrap: with `off` a command reaches neither this machine's loopback
 * services (an HTTP server, the real PostgreSQL on 127.0.0.1:5432) nor a non-loopback address; with
 * `proxy` a listed host (a local fake registry) answers through the harness's proxy and an unlisted one is
 * refused; `on` and danger-full-access keep the host network. Each `off`/`proxy` case has its control with
 * the network shared, so a failure here is the sandbox's doing, not a dead server.
 */
import { existsSync, readdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandSandboxFact } from "../../src/context/runtime-context.js";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { createBashTool } from "../../src/tools/bash/bash-tool.js";
import { ToolPipeline } from "../../src/tools/pipeline.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { bubblewrapAvailable, networkIsolationAvailable } from "../../src/tools/terminal/bubblewrap.js";
import { LocalEnvironment } from "../../src/tools/terminal/local.js";
import { hostAllowed, type SandboxNetwork } from "../../src/tools/terminal/sandbox-network.js";
import type { SandboxMode } from "../../src/tools/types.js";
import { testDatabaseUrl } from "../support/database.js";
import { waitUntil } from "../support/wait.js";
import { call, makeExec, tempDir } from "./support.js";

type Served = { server: Server; port: number; hits: string[] };

/** An HTTP server on `host` answering `body`, recording the paths it was asked for. */
async function serve(host: string, body: string): Promise<Served> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.writeHead(200, { "content-type": "text/plain" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, hits };
}

const OFF_MARKER = "[sandbox: network access denied under sandbox_network off";
const PROXY_MARKER = "[sandbox: network access denied under sandbox_network proxy";

const environments: LocalEnvironment[] = [];
const home = tempDir("bdsh-net-home-", "/var/tmp");

function bashIn(network: SandboxNetwork, mode: SandboxMode = "workspace-write") {
  const workspace = tempDir("bdsh-net-");
  const terminal = new LocalEnvironment({ cwd: workspace, stripEnvKeys: [], home, network });
  environments.push(terminal);
  const ctx = makeExec({ workspace, sandbox: mode, approval: "never" }, { terminal });
  const registry = new ToolRegistry();
  registry.register(createBashTool({ timeoutMs: 60_000, maxTimeoutMs: 600_000, maxOutputBytes: 100_000 }));
  const pipeline = new ToolPipeline({ registry, hooks: new HookBus() });
  return async (command: string) =>
    (await pipeline.run(call("bash", { description: "t", command }), ctx.exec)).text;
}

/** A non-loopback IPv4 address of this machine, if it has one (the unlisted "internet" host). */
const external = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && !i.internal && i.family === "IPv4")?.address;

const postgres = new URL(testDatabaseUrl());
const psql = `psql -h 127.0.0.1 -p 5432 -U ${postgres.username || "postgres"} -d ${postgres.pathname.slice(1) || "postgres"} -tAc "select 'pg-reached'"`;

describe.skipIf(!bubblewrapAvailable() || !networkIsolationAvailable())("sandbox_network", () => {
  let local: Served;
  let registry: Served;
  let unlisted: Served;
  let outside: Served | undefined;

  beforeAll(async () => {
    local = await serve("127.0.0.1", "local-service-body");
    registry = await serve("127.0.0.1", '{"name":"left-pad","version":"1.3.0"}');
    unlisted = await serve("127.0.0.1", "unlisted-body");
    if (external) outside = await serve(external, "outside-body");
  });

  afterAll(async () => {
    for (const terminal of environments) await terminal.cleanup();
    for (const s of [local, registry, unlisted, outside]) s?.server.close();
  });

  describe("off (the default)", () => {
    const off: SandboxNetwork = { mode: "off", allow: [] };

    it("curl to a loopback HTTP server fails with the denial marker; shared, it answers", async () => {
      const url = `http://127.0.0.1:${local.port}/x`;
      const denied = await bashIn(off)(`curl -sS --max-time 20 ${url}`);
      expect(denied).not.toContain("local-service-body");
      expect(denied).toContain(OFF_MARKER);
      expect(local.hits).toEqual([]);
      expect(await bashIn({ mode: "on", allow: [] })(`curl -sS --max-time 20 ${url}`)).toContain(
        "local-service-body",
      );
    });

    it("a node fetch to the loopback server fails with the denial marker", async () => {
      const script = `fetch("http://127.0.0.1:${local.port}/n").then(r => r.text()).then(t => console.log(t), e => { console.error("fetch failed:", e.cause?.code ?? e.message); process.exit(1); })`;
      const text = await bashIn(off)(`node -e '${script}'`);
      expect(text).not.toContain("local-service-body");
      expect(text).toContain("ECONNREFUSED");
      expect(text).toContain(OFF_MARKER);
    });

    it("psql to PostgreSQL on 127.0.0.1:5432 fails with the denial marker; shared, it connects", async () => {
      const denied = await bashIn(off)(psql);
      expect(denied).not.toContain("pg-reached");
      expect(denied).toContain(OFF_MARKER);
      expect(await bashIn({ mode: "on", allow: [] })(psql)).toContain("pg-reached");
    });

    it("the PostgreSQL unix socket directory is masked too; shared, the socket connects", async () => {
      const viaSocket = `psql -h /run/postgresql -U ${postgres.username || "postgres"} -d ${postgres.pathname.slice(1) || "postgres"} -tAc "select 'pg-reached'"`;
      const listing = await bashIn(off)("ls -A /run/postgresql | wc -l");
      expect(listing.trim()).toBe("0");
      const denied = await bashIn(off)(viaSocket);
      expect(denied).not.toContain("pg-reached");
      expect(denied).toContain("No such file or directory");
      expect(await bashIn({ mode: "on", allow: [] })(viaSocket)).toContain("pg-reached");
    });

    it.skipIf(!external)(
      "curl to a non-loopback address of this machine fails with the denial marker",
      async () => {
        const url = `http://${external}:${outside!.port}/y`;
        const denied = await bashIn(off)(`curl -sS --max-time 20 ${url}`);
        expect(denied).not.toContain("outside-body");
        expect(denied).toContain(OFF_MARKER);
        expect(outside!.hits).toEqual([]);
        expect(await bashIn({ mode: "on", allow: [] })(`curl -sS --max-time 20 ${url}`)).toContain(
          "outside-body",
        );
      },
    );

    it("danger-full-access keeps the host network, whatever sandbox_network says", async () => {
      const text = await bashIn(
        off,
        "danger-full-access",
      )(`curl -sS --max-time 20 http://127.0.0.1:${local.port}/full`);
      expect(text).toContain("local-service-body");
      expect(text).not.toContain("[sandbox: network");
    });

    it("the runtime context says which network commands get", () => {
      expect(commandSandboxFact("workspace-write", true, "/tmp/t", off)).toContain(
        "Network: none (sandbox_network: off)",
      );
      expect(
        commandSandboxFact("workspace-write", true, "/tmp/t", {
          mode: "proxy",
          allow: ["registry.npmjs.org"],
        }),
      ).toContain("(registry.npmjs.org) through the harness's proxy");
      expect(commandSandboxFact("danger-full-access", true, "/tmp/t", off)).toContain(
        "Network: shared with this machine",
      );
    });
  });

  describe("proxy", () => {
    const proxyFor = (): SandboxNetwork => ({ mode: "proxy", allow: [`127.0.0.1:${registry.port}`] });

    it("a listed host (a fake registry) answers through the harness's proxy, over HTTP and a CONNECT tunnel", async () => {
      const bash = bashIn(proxyFor());
      const plain = await bash(
        `echo "proxy=$HTTP_PROXY"; curl -sS --max-time 20 http://127.0.0.1:${registry.port}/left-pad`,
      );
      expect(plain).toMatch(/proxy=http:\/\/127\.0\.0\.1:\d+/);
      expect(plain).toContain('"name":"left-pad"');
      const tunnelled = await bash(`curl -sS --max-time 20 -p http://127.0.0.1:${registry.port}/tunnel`);
      expect(tunnelled).toContain('"name":"left-pad"');
      expect(registry.hits).toEqual(expect.arrayContaining(["/left-pad", "/tunnel"]));
      expect(tunnelled).not.toContain("[sandbox: network");
    });

    it("an unlisted host is refused by the proxy (plain and CONNECT), and going around the proxy fails", async () => {
      const bash = bashIn(proxyFor());
      const plain = await bash(`curl -sS --max-time 20 http://127.0.0.1:${unlisted.port}/u`);
      expect(plain).toContain(`${PROXY_MARKER}: 127.0.0.1:${unlisted.port} is not an allowed host`);
      expect(plain).not.toContain("unlisted-body");
      const tunnel = await bash(`curl -sS --max-time 20 -p http://127.0.0.1:${unlisted.port}/t`);
      expect(tunnel).toContain(PROXY_MARKER);
      expect(tunnel).not.toContain("unlisted-body");
      const direct = await bash(
        `curl -sS --max-time 20 --noproxy '*' http://127.0.0.1:${registry.port}/direct`,
      );
      expect(direct).not.toContain("left-pad");
      expect(direct).toContain(PROXY_MARKER);
      expect(unlisted.hits).toEqual([]);
      expect(registry.hits).not.toContain("/direct");
    });

    it("the proxy's socket lies in the hidden home: a sandbox without the proxy cannot reach it", async () => {
      const proxied = bashIn(proxyFor());
      expect(await proxied(`curl -sS --max-time 20 http://127.0.0.1:${registry.port}/warm`)).toContain(
        "left-pad",
      );
      const sockets = readdirSync(join(home, "run")).map((dir) => join(home, "run", dir, "proxy.sock"));
      expect(sockets.some((socket) => existsSync(socket))).toBe(true);
      const off = bashIn({ mode: "off", allow: [] });
      for (const socket of sockets.filter((path) => existsSync(path))) {
        const text = await off(
          `curl -sS --max-time 20 --unix-socket ${socket} http://127.0.0.1:${registry.port}/via-socket`,
        );
        expect(text).not.toContain("left-pad");
      }
      expect(registry.hits).not.toContain("/via-socket");
    });

    it("a command behind the relay is killed with its whole sandbox", async () => {
      const workspace = tempDir("bdsh-net-kill-");
      const terminal = new LocalEnvironment({ cwd: workspace, stripEnvKeys: [], home, network: proxyFor() });
      environments.push(terminal);
      const running = terminal.spawn("echo started; sleep 300 & sleep 300", {
        cwd: workspace,
        sandbox: { mode: "workspace-write", workspace },
      });
      let output = "";
      running.onOutput((_stream, chunk) => {
        output += chunk.toString("utf8");
      });
      await waitUntil(() => output.includes("started"), "the command to start behind the relay");
      const status = await running.kill();
      expect(status.exitCode === 0).toBe(false);
      expect(running.exitStatus).toBeDefined();
    });

    it("the exit code of the command passes through the relay", async () => {
      expect(await bashIn(proxyFor())("exit 7")).toContain("[exit code: 7]");
    });
  });

  it("allow entries: a name, name:port and *.domain", () => {
    expect(hostAllowed(["registry.npmjs.org"], "REGISTRY.npmjs.org.", 443)).toBe(true);
    expect(hostAllowed(["registry.npmjs.org:443"], "registry.npmjs.org", 80)).toBe(false);
    expect(hostAllowed(["*.pythonhosted.org"], "files.pythonhosted.org", 443)).toBe(true);
    expect(hostAllowed(["*.pythonhosted.org"], "pythonhosted.org.evil.com", 443)).toBe(false);
    expect(hostAllowed(["[::1]:8080"], "::1", 8080)).toBe(true);
    expect(hostAllowed([], "registry.npmjs.org", 443)).toBe(false);
  });
});
