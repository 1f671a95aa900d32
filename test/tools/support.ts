/** Fixtures for the tools tests: an exec context with services, temporary workspaces. */
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseToolArguments } from "../../src/tools/arguments.js";
import { FileObservations } from "../../src/tools/files/file-observations.js";
import { InMemoryJobStore, type JobNotice } from "../../src/tools/jobs/job-store.js";
import { ServiceMap } from "../../src/tools/services.js";
import { MemoryBlobStore } from "../../src/tools/spill/blob-store.js";
import { LocalEnvironment } from "../../src/tools/terminal/local.js";
import type { ToolCallRequest, ToolExec, ToolServiceMap } from "../../src/tools/types.js";

export function tempDir(prefix = "bdsh-tools-", base = tmpdir()): string {
  return realpathSync(mkdtempSync(join(base, prefix)));
}

export type TestContext = {
  exec: ToolExec;
  services: ServiceMap;
  blobs: MemoryBlobStore;
  notices: JobNotice[];
  jobs: InMemoryJobStore;
  controller: AbortController;
};

export function makeExec(
  overrides: Partial<ToolExec> & { workspace: string },
  services: Partial<ToolServiceMap> = {},
): TestContext {
  const blobs = new MemoryBlobStore();
  const notices: JobNotice[] = [];
  const jobs = new InMemoryJobStore({ onNotice: (notice) => notices.push(notice) });
  const map = new ServiceMap({
    blobs,
    jobs,
    fileObservations: new FileObservations(),
    terminal: new LocalEnvironment({ cwd: overrides.workspace, stripEnvKeys: [] }),
    ...services,
  });
  const controller = new AbortController();
  const exec: ToolExec = {
    callId: "call_1",
    toolName: "test",
    session: { sessionId: "session-1", kind: "main", depth: 0 },
    cwd: overrides.workspace,
    sandbox: "workspace-write",
    approval: "ask",
    signal: controller.signal,
    concludeTurn: () => {},
    services: map,
    ...overrides,
  };
  return { exec, services: map, blobs, notices, jobs, controller };
}

export function call(name: string, args: unknown, callId = "call_1"): ToolCallRequest {
  const rawArguments = typeof args === "string" ? args : JSON.stringify(args);
  return { callId, name, rawArguments, args: parseToolArguments(rawArguments) };
}
