/**
 * Issue 14 finding 4 (last part): without bubblewrap, commands must not run unsandboxed in silence. Each
 * `bdsh` start warns on stderr, the runtime context tells the model, `doctor` says how to install it, and
 * `sandbox_required: true` refuses to run commands at all. The CLI runs as a child process whose PATH
 * holds every program of /usr/bin and /bin except `bwrap`.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeProvider, type FakeReply, startFakeProvider } from "../../testing/fake-provider/index.js";
import { runCli } from "../support/run-cli.js";

let fake: FakeProvider;
let path: string;

beforeAll(async () => {
  fake = await startFakeProvider({ script: [] });
  path = mkdtempSync(join(tmpdir(), "bdsh-nobwrap-path-"));
  for (const dir of ["/usr/local/bin", "/usr/bin", "/bin"]) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (name === "bwrap" || existsSync(join(path, name))) continue;
      symlinkSync(join(dir, name), join(path, name));
    }
  }
});
afterAll(async () => {
  await fake.close();
});

function environment(config?: string) {
  const home = mkdtempSync(join(tmpdir(), "bdsh-nobwrap-home-"));
  if (config) writeFileSync(join(home, "config.yaml"), config);
  const workspace = mkdtempSync(join(tmpdir(), "bdsh-nobwrap-ws-"));
  mkdirSync(join(workspace, "src"));
  return {
    workspace,
    env: { BDSH_HOME: home, BDSH_BASE_URL: fake.url, DEEPSEEK_API_KEY: "sk-nobwrap", PATH: path },
  };
}

/** Replies by order from `offset` on (a script array counts every request the fake has seen). */
function script(offset: number, replies: FakeReply[]): void {
  fake.setScript((_request, index) => replies[index - offset] ?? { text: "extra" });
}

const WARNING =
  "bdsh: warning: commands run WITHOUT an OS sandbox: bubblewrap (bwrap) is not available (install it with `apt-get install bubblewrap`";

describe("no bubblewrap (issue 14 finding 4)", () => {
  it("bdsh run warns on stderr and the model is told in its runtime context", async () => {
    const { workspace, env } = environment();
    const offset = fake.requests.length;
    script(offset, [{ text: "ok" }]);
    const result = await runCli(["run", "--cwd", workspace, "hello"], env);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(WARNING);
    const sent = JSON.stringify(fake.requests[offset]!.body!.messages);
    expect(sent).toContain("Command sandbox: none. bubblewrap is not available");
  });

  it("bdsh doctor says commands run unsandboxed and how to install bubblewrap", async () => {
    const { env } = environment();
    const result = await runCli(["doctor"], env);
    expect(result.stdout + result.stderr).toContain("bubblewrap (bwrap) not found");
    expect(result.stdout + result.stderr).toContain("apt-get install bubblewrap");
  });

  it("sandbox_required: true refuses to run the command, warns that it will, and the model sees why", async () => {
    const { workspace, env } = environment("sandbox_required: true\n");
    const offset = fake.requests.length;
    script(offset, [
      {
        toolCalls: [{ id: "c1", name: "bash", arguments: { command: "touch ran.txt", description: "mark" } }],
      },
      { text: "done" },
    ]);
    const result = await runCli(["run", "--cwd", workspace, "mark it"], env);
    expect(result.stderr).toContain(
      "bdsh: warning: commands will be refused: bubblewrap (bwrap) is not available",
    );
    expect(existsSync(join(workspace, "ran.txt"))).toBe(false);
    const tool = (fake.requests[offset + 1]!.body!.messages as Array<{ role: string; content: string }>).find(
      (m) => m.role === "tool",
    );
    expect(tool?.content).toContain("sandbox_required is set, but bubblewrap (bwrap) is not available");
  });
});
