/** The factory: SQLite in a private home unless a database URL is given; never a password in `location`. */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open-store.js";
import { redactUrl } from "../../src/store/redact-url.js";
import type { Store } from "../../src/store/store.js";
import { testDatabaseUrl } from "../support/database.js";

let dir: string | undefined;
let store: Store | undefined;

afterEach(async () => {
  await store?.close();
  store = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("openStore", () => {
  it("opens SQLite at <home>/bdsh.db, creating the home private (0700), migrated", async () => {
    dir = mkdtempSync(join(tmpdir(), "bdsh-open-"));
    const home = join(dir, "nested", ".bdsh");
    store = await openStore({ home });
    expect(store.kind).toBe("sqlite");
    expect(store.location).toBe(join(home, "bdsh.db"));
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect((await store.createSession()).lastSeq).toBe(0);
  });

  it("opens PostgreSQL when a database URL is given, and never shows its password", async () => {
    const url = new URL(testDatabaseUrl());
    url.password = "hunter2-secret";
    dir = mkdtempSync(join(tmpdir(), "bdsh-open-"));
    store = await openStore({ databaseUrl: url.toString(), home: dir });
    expect(store.kind).toBe("postgres");
    expect(store.location).not.toContain("hunter2-secret");
    expect(store.location).toContain(url.hostname);
    expect(await store.listSessions({ limit: 1 })).toBeInstanceOf(Array);
  });
});

describe("redactUrl", () => {
  it("hides a password in the authority and in a password parameter", () => {
    expect(redactUrl("postgres://u:s3cret@db:5432/x")).toBe("postgres://u:***@db:5432/x");
    expect(redactUrl("postgres://u@db/x?password=s3cret&sslmode=require")).not.toContain("s3cret");
    expect(redactUrl("not a url s3cret")).not.toContain("s3cret");
  });
});
