/**
 * Raw PCM formats and the WAV container (seed 000 streaming-tts.md: "raw PCM chunks, int16 mono at the
 * provider's declared sample rate").
 *
 * Invariants:
 * - A format is little-endian signed integer PCM: `sampleWidth` bytes per sample (2 = int16), interleaved
 *   `channels`. Every provider and sink speaks it; conversion between two formats is `convertPcm`.
 * - `wavHeader` writes the canonical 44-byte header; `parseWav` accepts any RIFF/WAVE with a `fmt ` and a
 *   `data` chunk and trusts the data length only when it fits the file (a streamed WAV, such as espeak-ng's
 *   `--stdout`, carries a placeholder length).
 */

export type PcmFormat = { sampleRate: number; channels: number; sampleWidth: number };

/** int16 mono at a rate: what a provider is unless it says otherwise. */
export function int16Mono(sampleRate: number): PcmFormat {
  return { sampleRate, channels: 1, sampleWidth: 2 };
}

export function sameFormat(a: PcmFormat, b: PcmFormat): boolean {
  return a.sampleRate === b.sampleRate && a.channels === b.channels && a.sampleWidth === b.sampleWidth;
}

export function bytesPerSecond(format: PcmFormat): number {
  return format.sampleRate * format.channels * format.sampleWidth;
}

export const WAV_HEADER_BYTES = 44;

export function wavHeader(format: PcmFormat, dataBytes: number): Buffer {
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(Math.min(36 + dataBytes, 0xffff_ffff), 4);
  header.write("WAVE", 8, "ascii");
  header.write("fmt ", 12, "ascii");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // integer PCM
  header.writeUInt16LE(format.channels, 22);
  header.writeUInt32LE(format.sampleRate, 24);
  header.writeUInt32LE(bytesPerSecond(format), 28);
  header.writeUInt16LE(format.channels * format.sampleWidth, 32);
  header.writeUInt16LE(format.sampleWidth * 8, 34);
  header.write("data", 36, "ascii");
  header.writeUInt32LE(Math.min(dataBytes, 0xffff_ffff), 40);
  return header;
}

export type ParsedWav = { format: PcmFormat; data: Buffer };

/** The format and samples of a WAV file; `undefined` when the bytes are not integer-PCM WAV. */
export function parseWav(bytes: Uint8Array): ParsedWav | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (
    buffer.length < 12 ||
    buffer.toString("ascii", 0, 4) !== "RIFF" ||
    buffer.toString("ascii", 8, 12) !== "WAVE"
  )
    return undefined;
  let format: PcmFormat | undefined;
  let offset = 12;
  while (offset + 8 <= buffer.length) {
    const id = buffer.toString("ascii", offset, offset + 4);
    const size = buffer.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === "fmt ") {
      if (body + 16 > buffer.length || buffer.readUInt16LE(body) !== 1) return undefined;
      format = {
        channels: buffer.readUInt16LE(body + 2),
        sampleRate: buffer.readUInt32LE(body + 4),
        sampleWidth: buffer.readUInt16LE(body + 14) / 8,
      };
    } else if (id === "data") {
      if (!format) return undefined;
      const end = Math.min(body + size, buffer.length);
      const frame = format.channels * format.sampleWidth;
      const usable = end - ((end - body) % frame);
      return { format, data: buffer.subarray(body, usable) };
    }
    offset = body + size + (size % 2);
  }
  return undefined;
}

/** Seconds of audio in `bytes` of PCM. */
export function durationOf(bytes: number, format: PcmFormat): number {
  return bytes / bytesPerSecond(format);
}

/**
 * PCM in one format as another: width to int16 and back, channels mixed down or duplicated, the rate changed
 * by linear interpolation. Good enough for speech; chunks are converted independently.
 */
export function convertPcm(chunk: Uint8Array, from: PcmFormat, to: PcmFormat): Buffer {
  const input = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (sameFormat(from, to)) return input;
  const frameBytes = from.channels * from.sampleWidth;
  const frames = Math.floor(input.length / frameBytes);
  const mono = new Float64Array(frames);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let c = 0; c < from.channels; c++)
      sum += readSample(input, f * frameBytes + c * from.sampleWidth, from.sampleWidth);
    mono[f] = sum / from.channels;
  }
  const outFrames =
    from.sampleRate === to.sampleRate ? frames : Math.floor((frames * to.sampleRate) / from.sampleRate);
  const out = Buffer.alloc(outFrames * to.channels * to.sampleWidth);
  for (let f = 0; f < outFrames; f++) {
    const position = (f * from.sampleRate) / to.sampleRate;
    const left = Math.floor(position);
    const right = Math.min(left + 1, frames - 1);
    const t = position - left;
    const value = (mono[left] ?? 0) * (1 - t) + (mono[right] ?? 0) * t;
    for (let c = 0; c < to.channels; c++)
      writeSample(out, (f * to.channels + c) * to.sampleWidth, to.sampleWidth, value);
  }
  return out;
}

/** A sample as a float in [-1, 1). */
function readSample(buffer: Buffer, offset: number, width: number): number {
  if (width === 1) return (buffer.readUInt8(offset) - 128) / 128; // 8-bit WAV is unsigned
  if (width === 2) return buffer.readInt16LE(offset) / 32768;
  if (width === 3) return buffer.readIntLE(offset, 3) / 8388608;
  return buffer.readInt32LE(offset) / 2147483648;
}

function writeSample(buffer: Buffer, offset: number, width: number, value: number): void {
  const v = Math.max(-1, Math.min(value, 1 - 1 / 2 ** (width * 8 - 1)));
  if (width === 1) buffer.writeUInt8(Math.round(v * 128 + 128), offset);
  else if (width === 2) buffer.writeInt16LE(Math.round(v * 32768), offset);
  else if (width === 3) buffer.writeIntLE(Math.round(v * 8388608), offset, 3);
  else buffer.writeInt32LE(Math.round(v * 2147483648), offset);
}
