/**
 * Prefix reuse (M23, L12, L13): a 12-step better-dsh session on SQLite in which, during tool calls, the
 * working directory, the sandbox mode and the approval policy change, once each. For every consecutive
 * pair of requests: does the later one's message list extend the earlier one's byte for byte (each element
 * compared by `JSON.stringify`), with identical `tools`?
 */
import type { FakeRequest } from "../../testing/fake-provider/index.js";
import { sessionScript } from "./common.js";
import { runOurs } from "./ours.js";

export const PREFIX_STEPS = 12;

type Body = { messages: unknown[]; tools?: unknown };

export type PrefixReport = {
  requests: number;
  pairs: number;
  extending: number;
  /** Per pair `i` (request i against i-1): whether it extends, and why not. */
  failures: string[];
  /** How many runtime-context user messages the last request carries (the first snapshot + one per change). */
  runtimeContexts: number;
};

function bodyOf(request: FakeRequest): Body {
  const body = request.body;
  if (!body || !Array.isArray(body.messages)) throw new Error(`request ${request.index} has no messages`);
  return { messages: body.messages, tools: body.tools };
}

function whyNotExtends(previous: Body, next: Body): string | undefined {
  if (JSON.stringify(previous.tools) !== JSON.stringify(next.tools)) return "tools differ";
  if (next.messages.length < previous.messages.length) return "fewer messages";
  const at = previous.messages.findIndex((m, i) => JSON.stringify(m) !== JSON.stringify(next.messages[i]));
  return at === -1 ? undefined : `message ${at} differs`;
}

export async function runPrefixSession(): Promise<PrefixReport> {
  const { bodies } = await runOurs("sqlite", sessionScript(PREFIX_STEPS), (n, facts) => {
    if (n === 2) facts.cwd = `${facts.cwd}/sub`;
    if (n === 5) facts.sandbox = "read-only";
    if (n === 8) facts.approval = "never";
  });
  const parsed = bodies.map(bodyOf);
  const failures: string[] = [];
  let extending = 0;
  for (let i = 1; i < parsed.length; i++) {
    const why = whyNotExtends(parsed[i - 1]!, parsed[i]!);
    if (why === undefined) extending++;
    else failures.push(`request ${i}: ${why}`);
  }
  const last = parsed.at(-1)?.messages ?? [];
  const runtimeContexts = last.filter((m) => {
    const message = m as { role?: unknown; content?: unknown };
    return message.role === "user" && String(message.content).startsWith("Runtime context");
  }).length;
  return { requests: parsed.length, pairs: parsed.length - 1, extending, failures, runtimeContexts };
}
