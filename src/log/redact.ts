/**
 * Redaction of known secret values: whatever is stored, printed or sent passes through
 * one `Redactor`, built once from the environment by the entry point and handed down explicitly (no
 * process globals): the session log (every event, so the database, `--json`, SSE and the model's history),
 * spilled blobs, `--record` files, provider error messages and the CLI's error lines.
 *
 * Invariants:
 * - Only values known in advance are replaced, each by `[REDACTED]`; values shorter than
 *   `MIN_SECRET_CHARS` are ignored (redacting `true` or `1234` would destroy ordinary text).
 * - A value is matched as written and as it appears inside a JSON string (quotes, backslashes and control
 *   characters escaped), so raw provider bodies and serialized events are covered too.
 * - Longer values are replaced first, so a value that contains another is never left half visible.
 * - Copy on write: input with nothing to redact is returned as is (same object, same string), so the
 *   append path allocates nothing; `Redactor.none` returns everything untouched at once.
 * - A stream (`stream()`: live text deltas) is redacted across chunk boundaries: what could still become a
 *   secret with the next chunk is held back until it cannot, and `flush()` gives the rest at the end.
 * - This is a net for accidental leaks, not a boundary: a command that encodes a secret (base64, split
 *   across lines) gets through. The environment policy (tools/terminal/child-env.ts) is the boundary.
 */

export const REDACTED = "[REDACTED]";
export const MIN_SECRET_CHARS = 8;

export class Redactor {
  static readonly none = new Redactor([]);

  /** Longest first. */
  private readonly needles: readonly string[];
  private readonly byteNeedles: readonly Buffer[];
  private readonly shortest: number;
  /**
   * One alternation of every needle, longest first (at one position the longest wins): V8 scans for all of
   * them in one pass, about as fast for 100 needles as for one (bench/log/redact.ts).
   */
  private readonly find: RegExp | undefined;
  private readonly findAll: RegExp | undefined;

  private constructor(needles: readonly string[]) {
    this.needles = needles;
    this.byteNeedles = needles.map((needle) => Buffer.from(needle, "utf8"));
    this.shortest = needles.length === 0 ? Number.POSITIVE_INFINITY : needles[needles.length - 1]!.length;
    const source = needles.map((needle) => needle.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")).join("|");
    this.find = needles.length === 0 ? undefined : new RegExp(source);
    this.findAll = needles.length === 0 ? undefined : new RegExp(source, "g");
  }

  /** A redactor for these values (undefined, empty and short ones are skipped). */
  static of(values: Iterable<string | undefined>): Redactor {
    const set = new Set<string>();
    for (const value of values) {
      if (value === undefined) continue;
      for (const form of [value, value.trim()]) {
        if (form.length < MIN_SECRET_CHARS) continue;
        set.add(form);
        const escaped = JSON.stringify(form).slice(1, -1);
        if (escaped !== form) set.add(escaped);
      }
    }
    if (set.size === 0) return Redactor.none;
    return new Redactor([...set].sort((a, b) => b.length - a.length));
  }

  /** Whether any value is known. */
  get active(): boolean {
    return this.needles.length > 0;
  }

  /** This redactor plus more values. */
  with(values: Iterable<string | undefined>): Redactor {
    return Redactor.of([...this.needles, ...values]);
  }

  /** Whether `value` would be redacted by this redactor. */
  knows(value: string): boolean {
    return this.needles.includes(value);
  }

  text(text: string): string {
    if (text.length < this.shortest || this.find === undefined || !this.find.test(text)) return text;
    return text.replace(this.findAll!, REDACTED);
  }

  /** A redactor for one stream of text chunks (live deltas), where a secret may be split across chunks. */
  stream(): StreamRedactor {
    return new StreamRedactor(this, this.needles);
  }

  /** Every string inside `value` (arrays and plain objects, deeply), copied only where something changed. */
  value<T>(value: T): T {
    if (!this.active) return value;
    return this.walk(value, 0) as T;
  }

  /** The same for raw bytes (a body that is not UTF-8); returns the input when nothing matched. */
  bytes(bytes: Uint8Array): Uint8Array {
    if (!this.active || bytes.length < this.shortest) return bytes;
    let buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let changed = false;
    for (const needle of this.byteNeedles) {
      let at = buffer.indexOf(needle);
      if (at === -1) continue;
      const parts: Buffer[] = [];
      let from = 0;
      while (at !== -1) {
        parts.push(buffer.subarray(from, at), Buffer.from(REDACTED));
        from = at + needle.length;
        at = buffer.indexOf(needle, from);
      }
      parts.push(buffer.subarray(from));
      buffer = Buffer.concat(parts);
      changed = true;
    }
    return changed ? buffer : bytes;
  }

  private walk(value: unknown, depth: number): unknown {
    if (typeof value === "string") return this.text(value);
    if (value === null || typeof value !== "object" || depth > 64) return value;
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const next = this.walk(value[i], depth + 1);
        if (next !== value[i]) {
          out ??= value.slice();
          out[i] = next;
        }
      }
      return out ?? value;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    let out: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(value)) {
      const next = this.walk(item, depth + 1);
      if (next !== item) {
        out ??= { ...(value as Record<string, unknown>) };
        out[key] = next;
      }
    }
    return out ?? value;
  }
}

/**
 * Redacts a text stream chunk by chunk. `push` returns what is safe to show now: everything except the
 * longest tail that is the start of a known value (it may complete with the next chunk), and never half of a
 * value that is already whole in the buffer. `flush` returns the held tail, redacted.
 */
export class StreamRedactor {
  private held = "";

  constructor(
    private readonly redactor: Redactor,
    private readonly needles: readonly string[],
  ) {}

  push(chunk: string): string {
    if (this.needles.length === 0) return chunk;
    const buffer = this.held + chunk;
    let cut = buffer.length - this.startOfValueAtEnd(buffer);
    // A whole value that straddles the cut is shown whole (redacted) rather than split; moving the cut may
    // make another value straddle it, so repeat until it stays.
    for (let moved = true; moved; ) {
      moved = false;
      for (const needle of this.needles) {
        const at = buffer.indexOf(needle, Math.max(0, cut - needle.length + 1));
        if (at !== -1 && at < cut && at + needle.length > cut) {
          cut = at + needle.length;
          moved = true;
        }
      }
    }
    this.held = buffer.slice(cut);
    return this.redactor.text(buffer.slice(0, cut));
  }

  flush(): string {
    const rest = this.redactor.text(this.held);
    this.held = "";
    return rest;
  }

  /** The length of the longest tail of `buffer` that a known value starts with (and does not complete). */
  private startOfValueAtEnd(buffer: string): number {
    const longest = this.needles[0]!.length;
    for (let k = Math.min(longest - 1, buffer.length); k > 0; k--) {
      const tail = buffer.slice(buffer.length - k);
      if (this.needles.some((needle) => needle.length > k && needle.startsWith(tail))) return k;
    }
    return 0;
  }
}
