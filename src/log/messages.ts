/**
 * The model-visible message shapes (C1 "surface"). These are what the projection produces and what the
 * model adapters serialise; they carry no storage or wire detail beyond what replay needs (M6, M9).
 */

export type TextBlock = { type: "text"; text: string };

/** M6: where a reasoning block came from on the OpenAI wire, so it is replayed under the same field. */
export type ReasoningField = "reasoning_content" | "reasoning" | "reasoning_text";

export type ReasoningBlock = {
  type: "reasoning";
  text: string;
  /** OpenAI-format field the reasoning arrived in (M26: replayed under the same name). */
  field?: ReasoningField;
  /** Anthropic thinking signature; re-attached only when the target provider and model are the same (M6). */
  signature?: string;
  /** Anthropic `redacted_thinking` payload, replayed as is to the same model. */
  redacted?: string;
};

/** `arguments` is the exact string the model produced (M9: replayed as `{}` when it is not a JSON object). */
export type ToolCallBlock = { type: "tool-call"; id: string; name: string; arguments: string };

export type AssistantBlock = TextBlock | ReasoningBlock | ToolCallBlock;

export type SystemMessage = { role: "system"; text: string };
/** SP8: tool-set changes are announced as developer messages instead of rewriting `tools`. */
export type DeveloperMessage = {
  role: "developer";
  text: string;
  toolAdditions?: string[];
  toolRemovals?: string[];
};
/**
 * M10: an image the model may be shown, as its handle names it. The bytes are not here: the model layer
 * loads them from `path` (checking `sha256`) only for the request in which the image is first sent.
 */
export type ImageRef = {
  name: string;
  mediaType: ImageMediaType;
  bytes: number;
  sha256: string;
  /** The content-addressed read-only copy, `<home>/attachments/<sha256>/<name>`. */
  path: string;
};

export const IMAGE_MEDIA_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

export type UserMessage = {
  role: "user";
  text: string;
  /** M10: image handles found in a human message's text, in order. */
  images?: ImageRef[];
};
export type AssistantMessage = {
  role: "assistant";
  blocks: AssistantBlock[];
  /** Provider and model that produced the blocks: signatures are only replayed to the same pair (M6). */
  provider?: string;
  model?: string;
};
export type ToolResultMessage = {
  role: "tool";
  callId: string;
  name: string;
  text: string;
  isError?: boolean;
  /** M10: the image a successful `read_image` call returned, as its handle. */
  images?: ImageRef[];
};

export type SurfaceMessage =
  | SystemMessage
  | DeveloperMessage
  | UserMessage
  | AssistantMessage
  | ToolResultMessage;

/** A surface node remembers the seq of the event that produced it: replacement ops address nodes by it. */
export type SurfaceNode = { seq: number; message: SurfaceMessage };

export function toolCallsOf(message: SurfaceMessage): ToolCallBlock[] {
  if (message.role !== "assistant") return [];
  return message.blocks.filter((b): b is ToolCallBlock => b.type === "tool-call");
}

/**
 * M10: the handle of an image, the one text that stands for it in the log (a `--attach` prompt, a
 * `read_image` result). Names are sanitised by the saver (`[\w.@+-]`), so they hold no quote.
 */
export function imageHandleText(image: ImageRef): string {
  const { name, mediaType, bytes, sha256, path } = image;
  return `[Image "${name}" (${mediaType}, ${bytes} bytes, sha256:${sha256}) saved at "${path}"]`;
}

const HANDLE =
  /\[Image "([\w.@+-]+)" \((image\/(?:png|jpeg|gif|webp)), (\d+) bytes, sha256:([0-9a-f]{64})\) saved at "([^"\n]+)"\]/g;

/** The image handles in `text`, in order (each with the exact text it was parsed from). */
export function imageHandlesIn(text: string): { image: ImageRef; handle: string }[] {
  const found: { image: ImageRef; handle: string }[] = [];
  if (!text.includes("[Image ")) return found;
  for (const match of text.matchAll(HANDLE)) {
    const [handle, name, mediaType, bytes, sha256, path] = match as unknown as string[];
    found.push({
      handle: handle!,
      image: {
        name: name!,
        mediaType: mediaType as ImageMediaType,
        bytes: Number(bytes),
        sha256: sha256!,
        path: path!,
      },
    });
  }
  return found;
}
