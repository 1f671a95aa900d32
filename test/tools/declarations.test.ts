/**
 * The tool declarations the model sees, byte for byte. The provider's prefix cache and the recorded
 * fixtures depend on them (SP8, M23), so a change of how a schema is written (TypeBox) must not change what
 * is sent: every tool this project defines is compared with test/tools/fixtures/declarations.json, the
 * declarations as they were sent before. Regenerate it (`BDSH_WRITE_DECLARATIONS=1`) only for a change
 * that is meant to reach the model.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { skillTool } from "../../src/context/skills.js";
import { workingDirectoryTool } from "../../src/context/working-directory.js";
import { resourceTools } from "../../src/mcp/tools.js";
import { goalTools } from "../../src/planning/goal-tools.js";
import { exitPlanModeTool } from "../../src/planning/plan-mode.js";
import { ralphReportTool } from "../../src/planning/ralph.js";
import { scheduleTools } from "../../src/planning/schedules.js";
import {
  interruptAgentTool,
  listAgentsTool,
  sendMessageTool,
  subagentForkTool,
  subagentTool,
} from "../../src/subagents/tools.js";
import { readImageTool } from "../../src/tools/files/read-image.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { standardTools } from "../../src/tools/standard.js";
import type { AnyToolDefinition } from "../../src/tools/types.js";

const FIXTURE = join(import.meta.dirname, "fixtures", "declarations.json");

function everyTool(): AnyToolDefinition[] {
  return [
    ...standardTools(),
    readImageTool({ home: "/home", images: true, save: () => ({}) as never }),
    skillTool,
    workingDirectoryTool({} as never),
    ...resourceTools({ connections: new Map() } as never),
    ...goalTools,
    exitPlanModeTool,
    ...scheduleTools,
    ralphReportTool,
    subagentTool,
    subagentForkTool,
    sendMessageTool,
    interruptAgentTool,
    listAgentsTool,
  ];
}

describe("tool declarations", () => {
  it("are the ones the model was sent before, byte for byte", () => {
    const registry = new ToolRegistry();
    for (const tool of everyTool()) registry.register(tool);
    const declarations = registry.declarations(registry.names());
    if (process.env.BDSH_WRITE_DECLARATIONS === "1")
      writeFileSync(FIXTURE, `${JSON.stringify(declarations, null, 2)}\n`);
    expect(declarations.length).toBeGreaterThan(30);
    // Compared as the text sent (JSON.parse keeps the key order), so a reordered key fails too.
    expect(JSON.stringify(declarations)).toBe(JSON.stringify(JSON.parse(readFileSync(FIXTURE, "utf8"))));
  });
});
