/**
 * L16: a one-shot run. Send the task as a follow-up, then wait until the agent is idle, no child is
 * running and nothing was appended since — child settlements and job notices can start more turns, so
 * "the first turn ended" is not "done". Exit code 0 only when the last `turn/end` is `completed`.
 */
import type { TurnEndReason } from "../log/events.js";
import type { Agent } from "./agent.js";

/** A service that can wait for an agent's running children (subagents, S1); optional. */
export type ChildWaiter = { waitForChildren(sessionId: string): Promise<boolean> };

export type HeadlessResult = { reason: TurnEndReason | undefined; exitCode: 0 | 1 };

export async function runHeadless(
  agent: Agent,
  prompt: string | undefined,
  children?: ChildWaiter,
): Promise<HeadlessResult> {
  if (prompt !== undefined) await agent.followup(prompt);
  else agent.kick();
  for (;;) {
    await agent.whenIdle();
    const idleSeq = agent.log.seq;
    const waiter = children ?? agent.api("childWaiter");
    const waited = (await waiter?.waitForChildren(agent.sessionId)) ?? false;
    await agent.whenIdle();
    if (!waited && agent.status === "idle" && agent.log.seq === idleSeq) break;
  }
  const reason = agent.log.last("turn/end")?.data.reason;
  return { reason, exitCode: reason === "completed" ? 0 : 1 };
}
