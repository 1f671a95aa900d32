/**
 * The model layer's public surface (ARCHITECTURE "Models"). Other folders import from here only.
 * `model/` depends on `log/` and nothing else of this project.
 */
export { type AdapterOptions, createAdapter } from "./adapter.js";
export {
  type AnthropicPreset,
  authHeaders,
  DEFAULT_IDLE_TIMEOUT_MS,
  endpointUrl,
  isProviderName,
  type OpenAiChatPreset,
  PRESETS,
  PROVIDER_NAMES,
  type Preset,
  type ProviderName,
  type ReasoningSwitch,
  type Route,
  type RouteOptions,
  resolveApiKey,
  resolveRoute,
  type WireFormat,
} from "./catalog.js";
export { classify, displayBaseUrl, isContextOverflow, parseRetryAfter } from "./errors.js";
export { checkKey, KEY_CHECK_TIMEOUT_MS, type KeyCheck, modelListUrl } from "./key-check.js";
export {
  createRecordingAdapter,
  createReplayAdapter,
  type RecordedExchange,
  readRecording,
  recordingFetch,
  replayFetch,
} from "./record.js";
export {
  abortableSleep,
  callWithRetry,
  DEFAULT_RETRY,
  type RetriedReply,
  type RetryConfig,
  type RetryDecision,
  type RetryHooks,
  RetryPolicy,
  type RetryRun,
} from "./retry.js";
export type { FetchLike } from "./transport.js";
export * from "./types.js";
