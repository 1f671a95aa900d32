/**
 * A byte ring buffer for a background job's output (T9: 256 KiB). Readers keep an absolute offset; bytes
 * that fell off the front are reported as omitted (C17 vocabulary), never silently skipped.
 */

export const JOB_RING_BYTES = 256 * 1024;

export class OutputRing {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Absolute offset of the first byte still held. */
  private start = 0;
  /** Absolute offset just past the last byte written. */
  total = 0;

  constructor(private readonly capacity = JOB_RING_BYTES) {}

  append(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    this.total += chunk.length;
    while (this.size > this.capacity) {
      const head = this.chunks[0]!;
      const excess = this.size - this.capacity;
      if (head.length <= excess) {
        this.chunks.shift();
        this.size -= head.length;
        this.start += head.length;
      } else {
        this.chunks[0] = head.subarray(excess);
        this.size -= excess;
        this.start += excess;
      }
    }
  }

  /** Bytes from `offset` to the end, and how many before them were lost. */
  readFrom(offset: number): { bytes: Buffer; omitted: number } {
    const from = Math.max(offset, this.start);
    const all = Buffer.concat(this.chunks);
    return { bytes: all.subarray(from - this.start), omitted: from - offset };
  }
}
