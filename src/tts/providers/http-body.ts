/**
 * The HTTP half the chunked providers share: one POST, a refusal turned into a `TtsError` with the key
 * redacted, and the body read chunk by chunk as it arrives.
 *
 * Invariants:
 * - The credential only travels in the header the provider names; every message built here passes the
 *   redactor first (a provider may echo the key in an error body), and the URL is shown without its query.
 * - Redirects are not followed: a key is never re-sent to another host.
 * - Aborting the signal cancels the request and the body read.
 */
import { Redactor } from "../../log/redact.js";
import { TtsError } from "../provider.js";

/** How much of an error body is quoted. */
const ERROR_BODY_CHARS = 400;

export async function postForStream(
  fetcher: typeof fetch,
  provider: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  secret: string,
  signal: AbortSignal,
): Promise<Response> {
  const redactor = Redactor.none.with([secret]);
  const shown = url.replace(/\?.*$/, "");
  let response: Response;
  try {
    response = await fetcher(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
      redirect: "manual",
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw new TtsError("ABORTED", `${provider}: stopped`, provider);
    throw new TtsError(
      "NETWORK",
      redactor.text(`${provider}: ${shown}: ${(error as Error).message}`),
      provider,
    );
  }
  if (response.status < 200 || response.status > 299) {
    const text = await response.text().catch(() => "");
    throw new TtsError(
      "HTTP",
      redactor.text(`${provider}: ${shown} answered ${response.status}: ${text.slice(0, ERROR_BODY_CHARS)}`),
      provider,
    );
  }
  if (!response.body)
    throw new TtsError("MALFORMED", `${provider}: ${shown} answered without a body`, provider);
  return response;
}

/** The body's chunks as they arrive. */
export async function* bodyChunks(
  response: Response,
  provider: string,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      let step: Awaited<ReturnType<typeof reader.read>>;
      try {
        step = await reader.read();
      } catch (error) {
        if (signal.aborted) throw new TtsError("ABORTED", `${provider}: stopped`, provider);
        throw new TtsError("NETWORK", `${provider}: the stream broke: ${(error as Error).message}`, provider);
      }
      if (step.done) return;
      if (step.value.byteLength) yield step.value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
