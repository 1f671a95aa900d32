/**
 * M20: a session's token usage and cost from the store; its children (S1 subagents and forks) roll up.
 *
 * Invariants:
 * - `own` is the session's requests only (a fork's copied parent events are not counted, see usageOf);
 *   `withChildren` adds every descendant once, archived ones included (their tokens were spent).
 * - `cost` prices `withChildren` at the given price; `undefined` when the price is unknown. A child that
 *   ran another model is priced at the same price: the rows are one total, not a bill per model.
 */
import { addUsage, USAGE_EVENT_TYPES, type UsageTotals, usageOf } from "../log/usage.js";
import { costOf, type Price } from "../model/pricing.js";
import { childSessions } from "../store/children.js";
import type { Store } from "../store/store.js";

export async function sessionUsage(
  store: Store,
  sessionId: string,
  price: Price | undefined,
): Promise<{ own: UsageTotals; withChildren: UsageTotals; cost: number | undefined }> {
  const own = await ownUsage(store, sessionId);
  let withChildren = own;
  const seen = new Set([sessionId]);
  const queue = [sessionId];
  while (queue.length > 0) {
    const parent = queue.shift() as string;
    for (const { id: child } of await childSessions(store, parent)) {
      if (seen.has(child)) continue;
      seen.add(child);
      queue.push(child);
      withChildren = addUsage(withChildren, await ownUsage(store, child));
    }
  }
  return { own, withChildren, cost: costOf(withChildren, price) };
}

async function ownUsage(store: Store, sessionId: string): Promise<UsageTotals> {
  const events = await store.read(sessionId, { types: USAGE_EVENT_TYPES });
  return usageOf(events).session;
}
