/**
 * `openAgent` the way tests (and benches that drive the loop in-process) open it: a placeholder provider key
 * the scripted provider accepts, and only `PATH` for the harness and its tools — never the test runner's own
 * environment, which may hold real keys. Anything else is the caller's.
 */
import { type OpenAgentOptions, type OpenedAgent, openAgent } from "../../src/presets/open-agent.js";

type ToolOptions = NonNullable<OpenAgentOptions["toolOptions"]>;

/** `home` is required (a test never uses the real one); tool options default to that home and `PATH` only. */
export type TestAgentOptions = Omit<OpenAgentOptions, "home" | "toolOptions"> & {
  home: string;
  toolOptions?: Partial<ToolOptions>;
};

export function testAgentEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { DEEPSEEK_API_KEY: "test", PATH: process.env.PATH, ...extra };
}

export function openTestAgent(options: TestAgentOptions): Promise<OpenedAgent> {
  return openAgent({
    env: testAgentEnv(),
    ...options,
    toolOptions: { home: options.home, env: { PATH: process.env.PATH }, ...options.toolOptions },
  });
}
