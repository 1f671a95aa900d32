/**
 * Every child session of a parent (S1 subagents and forks, archived ones included), oldest first, read page
 * by page through `listSessions({ parentId })`. One helper for whoever walks a session tree (usage roll-up,
 * the subagent ledger).
 */
import type { SessionDirectory, SessionRow } from "./store.js";

const PAGE = 100;

export async function childSessions(store: SessionDirectory, parentId: string): Promise<SessionRow[]> {
  const rows: SessionRow[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await store.listSessions({
      parentId,
      includeArchived: true,
      limit: PAGE,
      ...(before ? { before } : {}),
    });
    rows.push(...page);
    if (page.length < PAGE) return rows.reverse();
    before = page[page.length - 1]?.id;
  }
}
