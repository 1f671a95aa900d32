/**
 * What `bash` keeps of a stream (T8): the last `maxBytes` bytes for the result, and everything up to
 * `maxSpillBytes` for the spilled full output.
 */

export const MAX_SPILL_BYTES = 64 * 1024 * 1024;

export class StreamCapture {
  private full: Buffer[] = [];
  private fullBytes = 0;
  private tailChunks: Buffer[] = [];
  private tailBytes = 0;
  total = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly maxSpillBytes = MAX_SPILL_BYTES,
  ) {}

  append(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.fullBytes < this.maxSpillBytes) {
      const room = this.maxSpillBytes - this.fullBytes;
      const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.full.push(kept);
      this.fullBytes += kept.length;
    }
    this.tailChunks.push(chunk);
    this.tailBytes += chunk.length;
    while (this.tailBytes - (this.tailChunks[0]?.length ?? 0) >= this.maxBytes) {
      this.tailBytes -= this.tailChunks.shift()!.length;
    }
  }

  get truncated(): boolean {
    return this.total > this.maxBytes;
  }

  /** The last `maxBytes` bytes as text, without a torn first character. */
  tail(): string {
    const all = Buffer.concat(this.tailChunks);
    const cut = all.length > this.maxBytes ? all.subarray(all.length - this.maxBytes) : all;
    let start = 0;
    // Skip UTF-8 continuation bytes left by the cut.
    while (start < cut.length && start < 4 && ((cut[start] ?? 0) & 0xc0) === 0x80) start += 1;
    return cut.subarray(start).toString("utf8");
  }

  fullText(): string {
    return Buffer.concat(this.full).toString("utf8");
  }
}
