/**
 * Ids people can type: a short id (8 digits of the random part) shown by `sessions list` and accepted
 * wherever an id is, an undashed prefix accepted too, and the list in the order `--continue` picks.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pickedRow } from "../../src/cli/session-picker.js";
import { findSession } from "../../src/cli/session-select.js";
import { shortId } from "../../src/cli/short-id.js";
import { openStore } from "../../src/store/open-store.js";
import type { Store } from "../../src/store/store.js";
import { runCli } from "../support/run-cli.js";

// Two sessions made in the same minute: the same first 8 (and 13) characters.
const OLDER = "01a24e0e-ea30-75ce-829b-d90d2d5782f4";
const NEWER = "01a24e0e-ea31-7a00-8000-0000aa11bb22";

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** `extra` sessions made after the two: the older one's later activity still puts it first. */
async function twoSessions(extra = 0) {
  const root = mkdtempSync(join(tmpdir(), "bdsh-short-ids-"));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  mkdirSync(home);
  mkdirSync(workspace);
  store = await openStore({ home });
  await store.createSession({ id: OLDER, title: "older", metadata: { workspace } });
  await store.createSession({ id: NEWER, title: "newer", metadata: { workspace } });
  for (let i = 0; i < extra; i++) await store.createSession({ title: `extra ${i}`, metadata: { workspace } });
  // The older session was active last: the clock moves past the newer one's creation first (timestamps
  // have millisecond resolution; this waits on the clock's value, not for a length of time).
  const created = Date.now();
  while (Date.now() <= created + 1) {
    // spin until the next millisecond
  }
  await store.append(OLDER, [{ type: "user/message", data: { text: "again", source: "human" } }], 0);
  return { home, workspace, store };
}

describe("short ids", () => {
  it("are the last 8 digits of a UUID; other ids are their own", () => {
    expect(shortId(OLDER)).toBe("2d5782f4");
    expect(shortId("child-1")).toBe("child-1");
  });

  it("name one session where the first 8 characters are ambiguous; an undashed prefix works too", async () => {
    const { store } = await twoSessions();
    expect((await findSession(store, "2d5782f4")).id).toBe(OLDER);
    expect((await findSession(store, "AA11BB22")).id).toBe(NEWER);
    expect((await findSession(store, "01a24e0eea30")).id).toBe(OLDER);
    await expect(findSession(store, "01a24e0e")).rejects.toMatchObject({ code: "AMBIGUOUS" });
    await expect(findSession(store, "ffffffff")).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await findSession(store, OLDER)).id).toBe(OLDER);
  });

  it("sessions are listed by last activity, the session --continue picks on top", async () => {
    const { store, workspace } = await twoSessions();
    const listed = await store.listSessions({ workspace, order: "activity" });
    expect(listed.map((row) => row.id)).toEqual([OLDER, NEWER]);
    expect((await store.latestSession({ workspace }))?.id).toBe(listed[0]!.id);
    expect(pickedRow("", listed)?.id).toBe(OLDER);
    expect(pickedRow("2", listed)?.id).toBe(NEWER);
    expect(pickedRow("x", listed)).toBeUndefined();
  });

  it("bdsh sessions list shows short ids in that order over every session (no page of the newest), and sessions show takes one", async () => {
    const { home, workspace, store: opened } = await twoSessions();
    await opened.close();
    store = undefined;
    const listed = await runCli(["sessions", "list"], { BDSH_HOME: home }, workspace);
    expect(listed.code).toBe(0);
    const rows = listed.stdout.trim().split("\n").slice(1);
    expect(rows.map((line) => line.split(/\s+/)[0])).toEqual(["2d5782f4", "aa11bb22"]);
    // The session active last was created before 201 others: still on top, as --continue would pick it.
    const many = await twoSessions(201);
    await many.store.close();
    store = undefined;
    const top = await runCli(["sessions", "list", "--limit", "1"], { BDSH_HOME: many.home }, many.workspace);
    expect(
      top.stdout
        .trim()
        .split("\n")
        .slice(1)
        .map((line) => line.split(/\s+/)[0]),
    ).toEqual(["2d5782f4"]);
    const shown = await runCli(["sessions", "show", "aa11bb22"], { BDSH_HOME: home }, workspace);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`id:        ${NEWER} (short: aa11bb22)`);
  });
});
