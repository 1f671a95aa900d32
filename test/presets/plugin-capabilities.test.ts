/**
 * A plugin reaches what it declares: `needs` names store-backed capabilities (each a narrow view, not the
 * store), `uses` names other plugins' APIs (offered with `ctx.provide`). Asking for anything undeclared
 * throws while the agent opens, so what a plugin touches is read off its declaration.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { type Plugin, UndeclaredCapabilityError } from "../../src/index.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { type FakeProvider, startFakeProvider } from "../../testing/fake-provider/index.js";
import { openTestAgent } from "../support/test-agent.js";
import { visitCounterPlugin, visitReportPlugin } from "./fixtures/visit-counter-plugins.js";

let store: Store | undefined;
let fake: FakeProvider | undefined;
afterEach(async () => {
  await store?.close();
  await fake?.close();
  store = undefined;
  fake = undefined;
});

async function open(plugins: Plugin[]) {
  const home = mkdtempSync(join(tmpdir(), "bdsh-caps-"));
  fake ??= await startFakeProvider({ script: [{ text: "hello" }] });
  store ??= await openStore({ home });
  const config = { ...DEFAULT_CONFIG, model: { ...DEFAULT_CONFIG.model, base_url: fake.url } };
  return openTestAgent({ store, config, workspace: home, home, plugins });
}

describe("plugin capabilities", () => {
  it("a declared capability is a narrow view, and a declared API is the providing plugin's", async () => {
    let blobsView: object | undefined;
    const probe: Plugin = {
      name: "probe",
      needs: ["blobs"],
      setup(ctx) {
        blobsView = ctx.capability("blobs");
      },
    };
    const { agent, session } = await open([visitCounterPlugin, visitReportPlugin, probe]);
    expect(Object.keys(blobsView ?? {}).sort()).toEqual(["getBlob", "putBlob", "sessionBlobBytes"]);
    expect("append" in (blobsView ?? {})).toBe(false);
    await agent.followup("hi");
    await agent.whenIdle();
    // The report plugin read the counter through `uses` and wrote through its `blobs` capability.
    expect(agent.api("visitCounter")?.count()).toBe(1);
    expect(await store!.sessionBlobBytes(session.id)).toBe("visits: 1".length);
    await agent.close();
  });

  it("an undeclared capability or API throws, naming the plugin and what it should declare", async () => {
    const greedy: Plugin = {
      name: "greedy",
      setup(ctx) {
        ctx.capability("planning");
      },
    };
    await expect(open([greedy])).rejects.toThrow(UndeclaredCapabilityError);
    await expect(open([greedy])).rejects.toThrow(
      /plugin "greedy" asked for "planning" without listing it in its `needs`/,
    );
    const nosy: Plugin = {
      name: "nosy",
      setup(ctx) {
        ctx.use("visitCounter");
      },
    };
    await expect(open([visitCounterPlugin, nosy])).rejects.toThrow(/`uses`/);
  });
});
