/**
 * Issue 37 item 1: with no tracer provider registered (no OTLP endpoint), the tracing plugin registers
 * nothing on the loop, and inbox rows carry no trace context: off costs nothing per step.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/config/schema.js";
import { tracingEnabled } from "../../src/loop/trace-carrier.js";
import { openStore } from "../../src/store/open-store.js";
import { otlpTracesConfigured, tracesUrl } from "../../src/telemetry/otlp-export.js";
import { openTestAgent } from "../support/test-agent.js";

const home = mkdtempSync(join(tmpdir(), "bdsh-tracing-off-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe("tracing off (no endpoint)", () => {
  it("registers no listener and writes no trace context on inbox rows", async () => {
    expect(tracingEnabled()).toBe(false);
    const workspace = join(home, "ws");
    mkdirSync(workspace);
    const store = await openStore({ home });
    const { agent } = await openTestAgent({
      store,
      config: { ...DEFAULT_CONFIG, model: { ...DEFAULT_CONFIG.model, base_url: "http://127.0.0.1:9" } },
      workspace,
      home,
    });
    for (const hook of ["agent/turn-start", "agent/request", "tools/execute"])
      expect(agent.hooks.listeners(hook)).not.toContain("genai-tracing");
    const item = await agent.inject("hi"); // queued through the loop, which adds the context when on
    expect(item.metadata.trace).toBeUndefined();
    await agent.close();
    await store.close();
  });

  it("reads the standard variables: the traces endpoint as is, else the base with /v1/traces", () => {
    expect(otlpTracesConfigured({})).toBe(false);
    expect(
      otlpTracesConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }),
    ).toBe(false);
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" })).toBe("http://c:4318/v1/traces");
    expect(
      tracesUrl({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t/x",
      }),
    ).toBe("http://t/x");
  });
});
