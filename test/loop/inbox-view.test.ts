/**
 * L4: the agent reads its pending inbox rows only when they may have changed. A late notification of a
 * row already read is no news; one that lands while a read is in flight survives it unless the read
 * returned that row.
 */
import { describe, expect, it } from "vitest";
import { InboxView } from "../../src/loop/inbox-view.js";
import type { InboxItem } from "../../src/store/store.js";

const row = (id: string) => ({ id, queue: "turn", mode: "followup" }) as unknown as InboxItem;

describe("the agent's view of its inbox", () => {
  it("reads first, then only after a change; its own claims leave the rows it knows", () => {
    const view = new InboxView();
    expect(view.needsRead).toBe(true);
    view.beginRead();
    view.read([row("a"), row("b")]);
    expect(view.needsRead).toBe(false);
    view.claimed([view.rows[0]!]);
    expect(view.rows.map((r) => r.id)).toEqual(["b"]);
    view.markChanged();
    expect(view.needsRead).toBe(true);
    expect(view.reads).toBe(1);
  });

  it("a late notification of a row already read costs no read; a new row does", () => {
    const view = new InboxView();
    view.beginRead();
    view.read([row("a")]);
    view.announced("a");
    expect(view.needsRead).toBe(false);
    view.announced("c");
    expect(view.needsRead).toBe(true);
  });

  it("news during a read: kept unless the read returned it; any other change is always kept", () => {
    const view = new InboxView();
    view.beginRead();
    view.announced("x"); // lands while the read is in flight
    view.read([row("x")]);
    expect(view.needsRead).toBe(false);

    view.beginRead();
    view.announced("y");
    view.read([row("x")]);
    expect(view.needsRead).toBe(true);

    view.beginRead();
    view.markChanged(); // a cancel or a resync while reading: not known by row
    view.read([row("x"), row("y")]);
    expect(view.needsRead).toBe(true);
  });

  it("forgets what it saw when the drive ends: the same row announced later is news again", () => {
    const view = new InboxView();
    view.beginRead();
    view.read([row("a")]);
    view.forgetSeen();
    view.announced("a");
    expect(view.needsRead).toBe(true);
  });
});
