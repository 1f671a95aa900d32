/**
 * T22 `present` on the server: `GET /v1/sessions/:id/files?path=` serves a file the session presented,
 * inside its workspace only, behind the token; `..`, absolute paths, symlinks out of the workspace, files
 * the session did not present and other sessions' files are refused. Images are previewed inline, anything
 * else is an attachment; `nosniff` always.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import type { FakeProvider } from "../../testing/fake-provider/index.js";
import {
  api,
  type Scenario,
  startScenarioProvider,
  startServer,
  type TestServer,
  testConfig,
  tmpHome,
  toolResults,
  turnEnd,
  waitForEvent,
} from "./harness.js";

const TOKEN = "files-token";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

let store: Store;
let fake: FakeProvider;
let scenario: (name: string, fn: Scenario) => string;
let server: TestServer;
let workspace: string;

beforeAll(async () => {
  const made = tmpHome("bdsh-files-");
  workspace = made.workspace;
  store = await openStore({ home: made.home });
  ({ fake, scenario } = await startScenarioProvider());
  server = await startServer({
    store,
    config: testConfig(fake.url),
    home: made.home,
    workspace,
    token: TOKEN,
  });
});

afterAll(async () => {
  await server?.app.close();
  await fake?.close();
  await store?.close();
});

/** A session whose model presents `files` (workspace-relative), then says done. */
async function presentingSession(name: string, files: string[]): Promise<string> {
  const marker = scenario(name, (_request, messages) =>
    toolResults(messages).length > 0
      ? { text: "here they are" }
      : { toolCalls: [{ id: `p_${name}`, name: "present", arguments: { files } }] },
  );
  const created = await api(server.url, "POST", "/v1/sessions", { text: `${marker} deliver` }, AUTH);
  const id = String(created.body.id);
  await waitForEvent(store, id, turnEnd);
  return id;
}

const download = (id: string, path: string, headers: Record<string, string> = AUTH) =>
  fetch(`${server.url}/v1/sessions/${id}/files?path=${encodeURIComponent(path)}`, { headers });

describe("T22 the presented-file route", () => {
  it("serves an image inline and anything else as an attachment, with nosniff", async () => {
    mkdirSync(join(workspace, "out"), { recursive: true });
    writeFileSync(join(workspace, "out", "chart.png"), PNG);
    writeFileSync(join(workspace, "out", "data.csv"), "a,b\n1,2\n");
    const id = await presentingSession("serve", ["out/chart.png", "out/data.csv"]);

    const image = await download(id, "out/chart.png");
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(image.headers.get("content-disposition")).toMatch(/^inline; filename="chart\.png"/);
    expect(image.headers.get("x-content-type-options")).toBe("nosniff");
    expect(Buffer.from(await image.arrayBuffer())).toEqual(PNG);

    const csv = await download(id, "out/data.csv");
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("application/octet-stream");
    expect(csv.headers.get("content-disposition")).toMatch(/^attachment; filename="data\.csv"/);
    expect(csv.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await csv.text()).toBe("a,b\n1,2\n");
  });

  it("never shows an SVG or HTML file inline, whatever its name says", async () => {
    writeFileSync(
      join(workspace, "pic.svg"),
      '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    );
    const id = await presentingSession("svg", ["pic.svg"]);
    const svg = await download(id, "pic.svg");
    expect(svg.headers.get("content-type")).toBe("application/octet-stream");
    expect(svg.headers.get("content-disposition")).toMatch(/^attachment;/);
  });

  it("needs the token", async () => {
    writeFileSync(join(workspace, "t.txt"), "t");
    const id = await presentingSession("token", ["t.txt"]);
    expect((await download(id, "t.txt", {})).status).toBe(401);
    expect((await download(id, "t.txt", { authorization: "Bearer wrong" })).status).toBe(401);
  });

  it("refuses .., absolute paths and backslashes before touching the file system", async () => {
    writeFileSync(join(workspace, "r.txt"), "r");
    const id = await presentingSession("dots", ["r.txt"]);
    for (const path of ["../r.txt", "out/../r.txt", "/etc/passwd", join(workspace, "r.txt"), "..\\r.txt"]) {
      const response = await download(id, path);
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("BAD_PATH");
    }
  });

  it("without ?path= a known session is a 400, an unknown one a 404", async () => {
    const id = await presentingSession("nopath", ["r.txt"]);
    const missing = await fetch(`${server.url}/v1/sessions/${id}/files`, { headers: AUTH });
    expect(missing.status).toBe(400);
    const unknown = await fetch(`${server.url}/v1/sessions/0195d3c1-0000-7000-8000-000000000000/files`, {
      headers: AUTH,
    });
    expect(unknown.status).toBe(404);
  });

  it("refuses a file of the workspace the session did not present, and another session's file", async () => {
    writeFileSync(join(workspace, "mine.txt"), "mine");
    writeFileSync(join(workspace, "unlisted.txt"), "unlisted");
    const owner = await presentingSession("owner", ["mine.txt"]);
    const other = await presentingSession("other", ["t.txt"]);
    expect((await download(owner, "mine.txt")).status).toBe(200);
    expect((await download(owner, "unlisted.txt")).status).toBe(404);
    expect((await download(other, "mine.txt")).status).toBe(404);
  });

  it("refuses a presented file later swapped for a symlink out of the workspace, or under a swapped directory", async () => {
    const outside = tmpHome("bdsh-files-outside-").workspace;
    writeFileSync(join(outside, "secret.txt"), "secret");
    mkdirSync(join(workspace, "deliver"), { recursive: true });
    writeFileSync(join(workspace, "deliver", "secret.txt"), "harmless");
    writeFileSync(join(workspace, "swap.txt"), "harmless");
    const id = await presentingSession("swap", ["swap.txt", "deliver/secret.txt"]);
    expect((await download(id, "swap.txt")).status).toBe(200);

    rmSync(join(workspace, "swap.txt"));
    symlinkSync(join(outside, "secret.txt"), join(workspace, "swap.txt"));
    const file = await download(id, "swap.txt");
    expect(file.status).toBe(403);
    expect(((await file.json()) as { error: { code: string } }).error.code).toBe("OUTSIDE_WORKSPACE");

    renameSync(join(workspace, "deliver"), join(workspace, "deliver-old"));
    symlinkSync(outside, join(workspace, "deliver"));
    const directory = await download(id, "deliver/secret.txt");
    expect(directory.status).toBe(403);
    expect(((await directory.json()) as { error: { code: string } }).error.code).toBe("OUTSIDE_WORKSPACE");
  });

  it("is listed in the OpenAPI document as a binary download", async () => {
    const doc = await api(server.url, "GET", "/v1/openapi.json", undefined, AUTH);
    const paths = doc.body.paths as Record<
      string,
      Record<string, { responses: Record<string, { content: object }> }>
    >;
    const route = paths["/v1/sessions/{id}/files"]?.get;
    expect(Object.keys(route?.responses["200"]?.content ?? {})).toEqual(["application/octet-stream"]);
  });
});
