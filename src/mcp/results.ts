/**
 * An MCP `tools/call` result as the model sees it (T21).
 *
 * Invariants:
 * - Text content is joined with blank lines, in order; embedded text resources are included with their URI.
 * - Image content is saved as an attachment and becomes its handle (M10), which `read_image` shows; a model
 *   that cannot take images, an unsupported type or an oversized image gets a note instead. No bytes ever
 *   reach the text.
 * - Resource links are listed (`uri`, name, type); audio and binary resources are described, not inlined.
 * - `isError: true` reaches the model as `Error: …` (T21: "isError results are thrown").
 * - Nothing model-visible: `(<tool> returned no model-visible content)` (T21, the seed's exact text).
 * - Every text passes through the redactor (a server may echo its secret env back).
 */
import { IMAGE_MEDIA_TYPES, type ImageMediaType, type ImageRef, imageHandleText } from "../log/messages.js";
import type { Redactor } from "../log/redact.js";
import { MAX_IMAGE_BYTES } from "../model/images.js";
import type { ToolOutput } from "../tools/types.js";

/** What a `tools/call` answers, loosely typed (servers differ; unknown parts are described, not trusted). */
export type McpCallResult = {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  toolResult?: unknown;
};

export type ImageSink = {
  /** M10: the session's model takes image input. */
  images: boolean;
  save?(name: string, data: Uint8Array, mediaType: ImageMediaType): ImageRef;
};

export function emptyResultText(tool: string): string {
  return `(${tool} returned no model-visible content)`;
}

type Block = Record<string, unknown> & { type?: unknown };

export function resultToOutput(
  tool: string,
  result: McpCallResult,
  sink: ImageSink,
  redactor: Redactor,
): ToolOutput {
  const parts: string[] = [];
  let images = 0;
  const content = Array.isArray(result.content) ? (result.content as Block[]) : [];
  for (const block of content) {
    if (!block || typeof block !== "object") continue;
    switch (block.type) {
      case "text":
        if (typeof block.text === "string" && block.text !== "") parts.push(block.text);
        break;
      case "image":
        images++;
        parts.push(imagePart(tool, images, block, sink));
        break;
      case "audio":
        parts.push(
          `[audio content (${String(block.mimeType ?? "unknown type")}) not shown: audio is not supported]`,
        );
        break;
      case "resource_link":
        parts.push(linkText(block));
        break;
      case "resource":
        parts.push(embeddedText(block.resource));
        break;
      default:
        parts.push(`[content of type ${JSON.stringify(block.type)} not shown]`);
    }
  }
  if (!parts.some((part) => part !== "") && result.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent));
  }
  if (!parts.length && result.toolResult !== undefined) parts.push(JSON.stringify(result.toolResult));
  const joined = redactor.text(parts.filter((part) => part !== "").join("\n\n"));
  if (result.isError) {
    return {
      text: `Error: ${joined || `${tool} reported an error without a message`}`,
      isError: true,
      code: "MCP_TOOL_ERROR",
    };
  }
  return { text: joined || emptyResultText(tool) };
}

function imagePart(tool: string, index: number, block: Block, sink: ImageSink): string {
  const mimeType = typeof block.mimeType === "string" ? block.mimeType : "unknown type";
  const data = typeof block.data === "string" ? Buffer.from(block.data, "base64") : Buffer.alloc(0);
  const what = `the tool returned an image (${mimeType}, ${data.byteLength} bytes)`;
  if (!sink.images || !sink.save) {
    return `[${what}; this model cannot view images, so it is not shown. Work from the rest of the result.]`;
  }
  if (!(IMAGE_MEDIA_TYPES as readonly string[]).includes(mimeType)) {
    return `[${what}; only PNG, JPEG, GIF and WebP images can be shown, so it is not shown.]`;
  }
  if (data.byteLength === 0 || data.byteLength > MAX_IMAGE_BYTES) {
    return `[${what}; images must be 1 to ${MAX_IMAGE_BYTES} bytes, so it is not shown.]`;
  }
  const extension = mimeType.split("/")[1] === "jpeg" ? "jpg" : mimeType.split("/")[1];
  try {
    const ref = sink.save(`${tool}-${index}.${extension}`, data, mimeType as ImageMediaType);
    return `${imageHandleText(ref)}\n(An image from ${tool}. Call read_image with this handle to look at it.)`;
  } catch (error) {
    return `[${what}; it could not be saved (${(error as Error).message}), so it is not shown.]`;
  }
}

function linkText(block: Block): string {
  const name = typeof block.name === "string" ? block.name : "";
  const type = typeof block.mimeType === "string" ? `, ${block.mimeType}` : "";
  const description = typeof block.description === "string" ? `: ${block.description}` : "";
  return `[resource link ${String(block.uri)}${name ? ` (${name}${type})` : type ? ` (${type.slice(2)})` : ""}${description}]`;
}

function embeddedText(resource: unknown): string {
  if (!resource || typeof resource !== "object") return "";
  const r = resource as Record<string, unknown>;
  const uri = String(r.uri ?? "");
  if (typeof r.text === "string") return `[resource ${uri}]\n${r.text}`;
  if (typeof r.blob === "string") {
    const bytes = Buffer.from(r.blob, "base64").byteLength;
    return `[resource ${uri}: ${String(r.mimeType ?? "binary")}, ${bytes} bytes of binary content, not shown]`;
  }
  return `[resource ${uri}]`;
}
