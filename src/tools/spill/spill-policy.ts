/**
 * The spill policy (C14, C15, T14): a prepended `tools/post-execute` listener that caps every result.
 *
 * A result longer than `maxInlineTokens` × 4 characters becomes a head preview (`ceil(budget/2)`),
 * `\n\n[...]\n\n`, a tail preview (`floor(budget/2)`) and the notice
 * `(Omitted <N> bytes. Full formatted result stored at: spill://<id>. Use read with offset/limit, or grep
 * this path to search within it.)`; the full text is a blob row (`blobs` service).
 *
 * Invariants:
 * - Exempt: `read` results, outputs marked `noSpill`, blocked results and replacements (C14).
 * - Only the text is cut: `details` (what the call did, for people's views) are kept as the tool made them.
 * - Any failure (no blob service, the store throws) keeps the inline content, with a warning in metadata;
 *   but a spent session quota (spill-quota.ts) still cuts the result to its preview, saying nothing was stored.
 */
import type { HookBus } from "../../hooks/hook-bus.js";
import type { PostExecuteState, ToolOutput } from "../types.js";
import { spillLocator } from "./blob-store.js";
import { droppedNotice, SpillQuotaError } from "./spill-quota.js";

export const CHARS_PER_TOKEN = 4;
export const RETRIEVAL_HINT = "Use read with offset/limit, or grep this path to search within it.";

export type SpillPolicyOptions = { maxInlineTokens: number | undefined };

export function installSpillPolicy(hooks: HookBus, options: SpillPolicyOptions): () => void {
  return hooks.onWaterfall("tools/post-execute", (state) => spillIfLarge(state, options), {
    prepend: true,
    plugin: "spill-policy",
  });
}

export async function spillIfLarge(
  state: PostExecuteState,
  options: SpillPolicyOptions,
): Promise<PostExecuteState> {
  const { output } = state;
  if (!options.maxInlineTokens || state.action !== "accept" || output.noSpill || state.tool.name === "read") {
    return state;
  }
  const budget = options.maxInlineTokens * CHARS_PER_TOKEN;
  if (output.text.length <= budget) return state;
  try {
    const blobs = state.exec.services.get("blobs");
    if (!blobs) throw new Error("no blob store");
    const ref = await blobs.putBlob(state.exec.session.sessionId, output.text, {
      kind: "spill",
      tool: state.tool.name,
      callId: state.call.callId,
    });
    return {
      ...state,
      output: {
        ...output,
        text: preview(output.text, budget, storedAt(spillLocator(ref.id), droppedNotice(ref))),
        spill: { blobId: ref.id, bytes: ref.bytes },
      },
    };
  } catch (error) {
    if (error instanceof SpillQuotaError) {
      return {
        ...state,
        output: { ...output, text: preview(output.text, budget, `Not stored: ${error.message}.`) },
      };
    }
    const reason = error instanceof Error ? error.message : String(error);
    const warning = `spill-policy: ${reason}; keeping the inline content`;
    const next: ToolOutput = { ...output, metadata: { ...output.metadata, spillWarning: warning } };
    return { ...state, output: next };
  }
}

/** C14's sentence for a stored result, with what a quota dropped from the stored copy. */
function storedAt(locator: string, dropped: string | undefined): string {
  const sentence = `Full formatted result stored at: ${locator}. ${RETRIEVAL_HINT}`;
  return dropped ? `${sentence} ${dropped}` : sentence;
}

/** Head, `[...]`, tail and `(Omitted <N> bytes. <where>)`. */
export function preview(text: string, budget: number, where: string): string {
  const head = text.slice(0, Math.ceil(budget / 2));
  const tail = text.slice(text.length - Math.floor(budget / 2));
  const omitted = Buffer.byteLength(text) - Buffer.byteLength(head) - Buffer.byteLength(tail);
  return `${head}\n\n[...]\n\n${tail}\n\n(Omitted ${omitted} bytes. ${where})`;
}
