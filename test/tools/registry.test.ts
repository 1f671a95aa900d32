import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HookBus } from "../../src/hooks/hook-bus.js";
import { loadPlugins } from "../../src/tools/plugins.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ServiceMap } from "../../src/tools/services.js";
import { createStandardRegistry } from "../../src/tools/standard.js";
import { TerminalBackendRegistry } from "../../src/tools/terminal/environment.js";
import { localBackend } from "../../src/tools/terminal/local.js";
import type { AnyToolDefinition, AvailabilityContext } from "../../src/tools/types.js";
import { tempDir } from "./support.js";

function tool(name: string, toolset: string, extra: Partial<AnyToolDefinition> = {}): AnyToolDefinition {
  return {
    name,
    toolset,
    description: `${name} tool`,
    parameters: { type: "object", properties: {} },
    execute: async () => ({ text: name }),
    ...extra,
  };
}

const context = (env: NodeJS.ProcessEnv = {}): AvailabilityContext => ({
  env,
  services: new ServiceMap(),
  session: { sessionId: "s", kind: "main", depth: 0 },
});

describe("Hermes registry", () => {
  it("rejects names outside [A-Za-z0-9_-]{1,64}", () => {
    const registry = new ToolRegistry();
    expect(() => registry.register(tool("has space", "a"))).toThrow(/must match/);
    expect(() => registry.register(tool("x".repeat(65), "a"))).toThrow(/must match/);
    registry.register(tool("mcp__srv__do-it", "mcp"));
  });

  it("rejects shadowing a tool of another toolset unless allowed", () => {
    const registry = new ToolRegistry();
    registry.register(tool("read", "files"));
    expect(() => registry.register(tool("read", "plugin"))).toThrow(/already registered in toolset "files"/);
    registry.register(tool("read", "plugin"), { allowShadow: true });
    expect(registry.get("read")?.toolset).toBe("plugin");
  });

  it("resolves enabled, disabled and composite toolsets in registration order", () => {
    const registry = new ToolRegistry();
    registry.register(tool("bash", "terminal"));
    registry.register(tool("read", "files"));
    registry.register(tool("web_fetch", "web"));
    registry.defineComposite("coding", ["files", "terminal"]);
    expect(registry.resolve()).toEqual(["bash", "read", "web_fetch"]);
    expect(registry.resolve({ enabled: ["coding"] })).toEqual(["bash", "read"]);
    expect(registry.resolve({ disabled: ["web"] })).toEqual(["bash", "read"]);
    expect(registry.resolve({ enabled: ["coding", "web_fetch"], disabled: ["terminal"] })).toEqual([
      "read",
      "web_fetch",
    ]);
  });

  it("runs each availability check once per request; a throw means unavailable", async () => {
    let calls = 0;
    const shared = () => {
      calls += 1;
      return true;
    };
    const registry = new ToolRegistry();
    registry.register(tool("a", "s", { isAvailable: shared }));
    registry.register(tool("b", "s", { isAvailable: shared }));
    registry.register(
      tool("c", "s", {
        isAvailable: () => {
          throw new Error("boom");
        },
      }),
    );
    registry.register(tool("d", "s", { requiredEnv: ["NEEDED_KEY"] }));
    expect(await registry.available(registry.names(), context())).toEqual(["a", "b"]);
    expect(calls).toBe(1);
    expect(await registry.available(["d"], context({ NEEDED_KEY: "1" }))).toEqual(["d"]);
  });

  it("declares tools in a stable order whatever order the names come in", () => {
    const registry = createStandardRegistry();
    const names = registry.names();
    const forward = registry.declarations(names).map((d) => d.name);
    expect(registry.declarations([...names].reverse()).map((d) => d.name)).toEqual(forward);
    expect(forward.slice(0, 6)).toEqual(["bash", "read", "write", "edit", "glob", "grep"]);
  });
});

describe("Hermes plugins", () => {
  it("loads plugin tools and reports a broken plugin without failing", async () => {
    const home = tempDir();
    const local = tempDir();
    writeFileSync(
      join(home, "good.mjs"),
      `export function register(ctx) { ctx.registerTool({ name: "hello", toolset: "greet", description: "hi", parameters: { type: "object", properties: {} }, execute: async () => ({ text: "hello" }) }); }`,
    );
    writeFileSync(join(home, "broken.mjs"), "export function register() { throw new Error('nope'); }");
    writeFileSync(join(home, "nofn.mjs"), "export const x = 1;");
    mkdirSync(join(local, "dir-plugin"));
    writeFileSync(
      join(local, "dir-plugin", "index.mjs"),
      `export function register(ctx) { ctx.registerTool({ name: "read", toolset: "x", description: "", parameters: { type: "object", properties: {} }, execute: async () => ({ text: "" }) }, { allowShadow: true }); }`,
    );
    const registry = createStandardRegistry();
    const report = await loadPlugins({ directories: [home, local], registry, hooks: new HookBus() });
    expect(report.loaded.map((p) => p.name)).toEqual(["good"]);
    expect(report.failed.map((p) => [p.name, p.error])).toEqual([
      ["broken", "nope"],
      ["nofn", "the module does not export register(ctx)"],
      ["dir-plugin", expect.stringContaining("allow_tool_override")],
    ]);
    expect(registry.get("hello")?.toolset).toBe("greet");
    expect(registry.get("read")?.toolset).toBe("files");
  });

  it("lets a plugin override a builtin only with the opt-in", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "over.mjs"),
      `export function register(ctx) { ctx.registerTool({ name: "read", toolset: "x", description: "", parameters: { type: "object", properties: {} }, execute: async () => ({ text: "" }) }, { allowShadow: true }); }`,
    );
    const registry = createStandardRegistry();
    const report = await loadPlugins({
      directories: [dir],
      registry,
      hooks: new HookBus(),
      allowToolOverride: ["over"],
    });
    expect(report.failed).toEqual([]);
    expect(registry.get("read")?.toolset).toBe("x");
  });
});

describe("Hermes terminal backends", () => {
  it("reserves the built-in names for plugins", () => {
    const backends = new TerminalBackendRegistry();
    backends.register(localBackend, { builtin: true });
    for (const name of ["local", "ssh", "docker", "modal"]) {
      expect(() => backends.register({ ...localBackend, name })).toThrow(/reserved/);
    }
    backends.register({ ...localBackend, name: "acmebox", stripEnvKeys: ["ACMEBOX_TOKEN"] });
    expect(backends.stripKeys()).toEqual(["ACMEBOX_TOKEN"]);
  });
});
