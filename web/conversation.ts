/**
 * The dashboard's conversation: the shared transcript projection (src/transcript/, bundled by esbuild), plus
 * the seqs it received in order (the view's resume checks and the browser tests read them).
 *
 * Pure: no DOM, so it is tested under Node (test/dashboard/conversation.test.ts).
 */
import type { LogEvent } from "../src/log/events.js";
import { Transcript } from "../src/transcript/projection.js";

export type {
  ApprovalState,
  ChildState,
  CompactionState,
  QuestionState,
  ToolState,
  TranscriptItem as Item,
} from "../src/transcript/items.js";

export class Conversation extends Transcript {
  /** Every seq added, in order. */
  readonly seqs: number[] = [];

  override add(events: readonly LogEvent[]) {
    for (const event of events) if (event.seq > (this.seqs.at(-1) ?? 0)) this.seqs.push(event.seq);
    return super.add(events);
  }
}
