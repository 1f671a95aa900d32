/**
 * Random but well-formed session logs for the transcript's property tests and bench: turns of steps with
 * reasoning, text, parallel tool calls (approvals, questions, results in any order, some errors), steers,
 * cancels (L9 synthetic results), subagents and their settlements, goal rounds, compaction, retries, jobs,
 * forks (a `session/end-seed` over copied parent events) and usage on every reply.
 */
import type { LogEvent, NewEvent } from "../../src/log/events.js";

/** A small deterministic PRNG (mulberry32), so a failing seed reproduces. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type ScriptOptions = { turns?: number; maxCalls?: number; sessionId?: string };

export function sessionScript(seed: number, options: ScriptOptions = {}): LogEvent[] {
  const random = prng(seed);
  const int = (n: number) => Math.floor(random() * n);
  const chance = (p: number) => random() < p;
  const sessionId = options.sessionId ?? `s-${seed}`;
  const events: LogEvent[] = [];
  let clock = Date.parse("2026-12-01T10:00:00.000Z");
  const add = (event: NewEvent, where: { turn?: number; step?: number } = {}) => {
    clock += 1 + int(900);
    events.push({
      sessionId,
      seq: events.length + 1,
      at: new Date(clock).toISOString(),
      type: event.type,
      data: event.data,
      ...where,
    } as LogEvent);
  };
  const usage = () => ({
    inputTokens: 100 + int(5000),
    outputTokens: 10 + int(800),
    cacheReadTokens: int(3) === 0 ? 0 : int(4000),
    cacheWriteTokens: int(4) === 0 ? int(500) : 0,
    ...(chance(0.5) ? { reasoningTokens: int(100) } : {}),
  });

  if (chance(0.2)) {
    // S1: a fork's copy of its parent's events, then the marker.
    add({ type: "session/start", data: { kind: "main" } });
    add(
      {
        type: "assistant/message",
        data: {
          blocks: [{ type: "text", text: "parent reply" }],
          provider: "p",
          model: "m",
          finish: "stop",
          usage: usage(),
        },
      },
      { turn: 1, step: 1 },
    );
    add({ type: "session/end-seed", data: { parentId: "parent", parentSeq: 2 } });
  } else {
    add({ type: "session/start", data: { kind: "main", cwd: "/w" } });
  }
  let callN = 0;
  let childN = 0;
  let approvalN = 0;
  const openChildren: string[] = [];
  const turns = options.turns ?? 1 + int(6);
  for (let turn = 1; turn <= turns; turn++) {
    const goalRound = chance(0.15);
    if (goalRound) add({ type: "goal/round", data: { round: turn, maxRounds: 256 } }, { turn: turn - 1 });
    add({ type: "turn/start", data: { trigger: goalRound ? "followup" : "followup" } }, { turn });
    add({ type: "agent/status", data: { status: "running" } });
    add(
      {
        type: "user/message",
        data: goalRound
          ? { text: "<goal_round>keep going</goal_round>", source: "goal-round" }
          : { text: `task ${turn}`, source: "human" },
      },
      { turn, step: 1 },
    );
    if (chance(0.3) && openChildren.length > 0) {
      const childId = openChildren.shift() as string;
      add(
        {
          type: "user/message",
          data: {
            text: `agent ${childId} finished`,
            source: "subagent-settled",
            about: { kind: "subagent-settled", childId, reason: chance(0.8) ? "completed" : "error" },
          },
        },
        { turn, step: 1 },
      );
    }
    const steps = 1 + int(4);
    let cancelled = false;
    for (let step = 1; step <= steps && !cancelled; step++) {
      const where = { turn, step };
      add({ type: "step/start", data: {} }, where);
      if (step > 1 && chance(0.2))
        add({ type: "user/message", data: { text: "steer this way", source: "human" } }, where);
      if (chance(0.1))
        add(
          {
            type: "llm/retry",
            data: { attempt: 1, delayMs: 500, error: { code: "SERVER", message: "502" } },
          },
          where,
        );
      const calls = step < steps ? int((options.maxCalls ?? 4) + 1) : 0;
      const ids = Array.from({ length: calls }, () => `call-${++callN}`);
      const blocks = [
        ...(chance(0.5) ? [{ type: "reasoning" as const, text: "thinking…" }] : []),
        ...(chance(0.8) ? [{ type: "text" as const, text: `step ${step} text` }] : []),
        ...ids.map((id, i) => ({
          type: "tool-call" as const,
          id,
          name: i % 3 === 0 ? "bash" : i % 3 === 1 ? "read" : "subagent",
          arguments: JSON.stringify({ command: "ls" }),
        })),
      ];
      const interrupted = chance(0.05);
      add(
        {
          type: "assistant/message",
          data: {
            blocks,
            provider: "p",
            model: "m",
            finish: calls > 0 ? "tool-calls" : "stop",
            ...(interrupted ? { interrupted: true } : { usage: usage() }),
          },
        },
        where,
      );
      if (interrupted) {
        cancelled = true;
        break;
      }
      const pending = [...ids];
      for (const id of ids) {
        add({ type: "tool/call", data: { callId: id, name: "bash", arguments: "{}" } }, where);
        if (chance(0.2)) {
          const approvalId = `ap-${++approvalN}`;
          add(
            {
              type: "approval/requested",
              data: { id: approvalId, callId: id, tool: "bash", summary: "rm -rf x" },
            },
            where,
          );
          if (chance(0.8))
            add({ type: "approval/answered", data: { id: approvalId, decision: "allow-once" } }, where);
        }
        if (chance(0.15)) {
          const childId = `child-${++childN}`;
          openChildren.push(childId);
          add(
            { type: "subagent/started", data: { childId, mode: chance(0.5) ? "spawn" : "fork", task: "t" } },
            where,
          );
        }
      }
      cancelled = chance(0.08);
      while (pending.length > 0) {
        const id = pending.splice(int(pending.length), 1)[0] as string;
        add(
          {
            type: "tool/result",
            data: {
              callId: id,
              name: "bash",
              text: cancelled ? "Error: cancelled" : "ok",
              ...(cancelled || chance(0.1) ? { isError: true } : {}),
              ...(cancelled ? { synthetic: true } : { durationMs: int(3000) }),
              ...(chance(0.3) ? { details: { kind: "command", exitCode: int(3), truncated: false } } : {}),
            },
          },
          where,
        );
      }
      if (!cancelled && chance(0.08)) {
        add({ type: "compaction/start", data: { reason: "pressure" } }, where);
        add(
          {
            type: "compaction/summary",
            data: {
              text: "summary",
              startSeq: 1,
              endSeq: events.length,
              tokensBefore: 9000,
              tokensAfter: 900,
              usage: usage(),
            },
          },
          where,
        );
        add({ type: "compaction/end", data: { ok: true, replaced: 5 } }, where);
      }
      if (!cancelled && chance(0.1)) {
        add(
          {
            type: "tool/result",
            data: {
              callId: ids[0] ?? "x",
              name: "bash",
              text: "[pruned]",
              surfaceOp: { op: "replace", startSeq: 1, endSeq: 2 },
            },
          },
          where,
        );
      }
      if (chance(0.1))
        add(
          {
            type: "user/message",
            data: {
              text: "You have open todos",
              source: "continuation",
              about: { kind: "continuation", check: "open-todos", openTodos: 1 + int(3) },
            },
          },
          where,
        );
      add(
        {
          type: "step/end",
          data: { result: cancelled ? "aborted" : step === steps ? "completed" : "continue" },
        },
        where,
      );
    }
    if (chance(0.1))
      add({ type: "job/started", data: { jobId: `job-${turn}`, kind: "bash", label: "sleep" } }, { turn });
    if (chance(0.1))
      add({ type: "job/finished", data: { jobId: `job-${turn}`, status: "exited", exitCode: 0 } }, { turn });
    if (chance(0.1))
      add({ type: "goal/updated", data: { goal: goalSnapshot(turn), action: "created" } }, { turn });
    add({ type: "turn/end", data: { reason: cancelled ? "aborted" : "completed" } }, { turn });
    add({ type: "agent/status", data: { status: "idle" } });
    if (turn === 1 && chance(0.5)) add({ type: "session/title", data: { title: "A title", usage: usage() } });
  }
  return events;
}

function goalSnapshot(turn: number) {
  return {
    id: `goal-${turn}`,
    revision: turn,
    objective: "ship it",
    phase: "active" as const,
    roundsStarted: turn,
    maxRounds: 256,
  };
}
