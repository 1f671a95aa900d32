/**
 * Codex-style matrix (issue 5 item 10, T16, T17): sandbox mode × approval policy × action, through the
 * standard preset and the fake provider. Each cell runs one real agent turn and checks what the model saw.
 */

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import type { LogEvent } from "../../src/log/events.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { ApprovalAnswer } from "../../src/tools/types.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { openTestAgent } from "../support/test-agent.js";

type Sandbox = "read-only" | "workspace-write" | "danger-full-access";
type Policy = "never" | "ask-allow" | "ask-deny";
type Action = "write-inside" | "write-outside" | "dangerous-command";

let store: Store;
let fake: FakeProvider;
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "bdsh-matrix-"));
  store = await openStore({ home });
  fake = await startFakeProvider({ script: [] });
});
afterAll(async () => {
  await fake.close();
  await store.close();
});

async function runCell(
  sandbox: Sandbox,
  policy: Policy,
  action: Action,
): Promise<{ text: string; isError: boolean; asked: number }> {
  const workspace = mkdtempSync(join(tmpdir(), "bdsh-ws-"));
  const outside = join(mkdtempSync(join(tmpdir(), "bdsh-out-")), "outside.txt");
  const call =
    action === "write-inside"
      ? { name: "write", arguments: { file_path: join(workspace, "inside.txt"), content: "hi\n" } }
      : action === "write-outside"
        ? { name: "write", arguments: { file_path: outside, content: "hi\n" } }
        : {
            name: "bash",
            arguments: {
              description: "Stop a process",
              command: "pkill -f bdsh-no-such-process-xyz || true",
            },
          };
  const offset = fake.requests.length;
  const replies = [{ toolCalls: [{ id: "c1", ...call }] }, { text: "done" }];
  fake.setScript((_request, index) => replies[index - offset] ?? { text: "extra" });
  let asked = 0;
  const answer: ApprovalAnswer = policy === "ask-allow" ? "allow-once" : "deny";
  const config = {
    ...DEFAULT_CONFIG,
    sandbox,
    approval: policy === "never" ? ("never" as const) : ("ask" as const),
  };
  const { agent } = await openTestAgent({
    store,
    config: { ...config, model: { ...config.model, base_url: fake.url } },
    workspace,
    home,
    toolOptions: {
      approvals: {
        request: async () => {
          asked++;
          return answer;
        },
      },
    },
  });
  await agent.followup("do it");
  await agent.whenIdle();
  await agent.close();
  const events = await store.read(agent.sessionId);
  const result = events.find((e): e is LogEvent<"tool/result"> => e.type === "tool/result")!;
  if (action === "write-outside" && existsSync(outside)) rmSync(outside);
  return { text: result.data.text, isError: result.data.isError ?? false, asked };
}

const SANDBOXES: Sandbox[] = ["read-only", "workspace-write", "danger-full-access"];
const POLICIES: Policy[] = ["never", "ask-allow", "ask-deny"];

describe("T16 × T17 approval matrix", () => {
  for (const sandbox of SANDBOXES) {
    for (const policy of POLICIES) {
      it(`${sandbox} × ${policy}: writes follow the file policy`, async () => {
        const inside = await runCell(sandbox, policy, "write-inside");
        expect(inside.isError).toBe(sandbox === "read-only");
        if (inside.isError)
          expect(inside.text).toContain("[sandbox: file access denied under read-only mode]");
        const outside = await runCell(sandbox, policy, "write-outside");
        expect(outside.isError).toBe(sandbox !== "danger-full-access");
        if (outside.isError)
          expect(outside.text).toContain(`[sandbox: file access denied under ${sandbox} mode]`);
      });

      it(`${sandbox} × ${policy}: a dangerous command needs approval`, async () => {
        const cell = await runCell(sandbox, policy, "dangerous-command");
        if (policy === "never") {
          expect(cell.text).toBe(
            'Error: tool "bash" requires approval, but no approval channel is available',
          );
          expect(cell.asked).toBe(0);
        } else if (policy === "ask-deny") {
          expect(cell.text).toBe('Error: the user rejected tool "bash"');
          expect(cell.asked).toBe(1);
        } else {
          expect(cell.isError).toBe(false);
          expect(cell.asked).toBe(1);
        }
      });
    }
  }
});
