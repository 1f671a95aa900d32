/**
 * One row of the M17 overflow table: a provider's own wording for "the request does not fit the context
 * window", the real reply it was taken from, and where that reply was seen. Rows are data: the tests replay
 * each `example` through the adapter and expect `CONTEXT_WINDOW_EXCEEDED` (C10 recovery runs on it).
 */
export type OverflowRule = {
  provider: string;
  /** Tested against the body's error type, code and message. */
  pattern: RegExp;
  /** The rule holds only with this HTTP status (a 413 means overflow only with Anthropic's type). */
  status?: number;
  /** The status and body as the provider sent them (the body verbatim from `source`, ids shortened). */
  example: { status: number; body: string };
  /** Where the real reply was reported: an issue URL or a repo/path. */
  source: string;
};

/** M17 overflow wording (`isContextWindowExceededError`), one row per provider message seen in the wild. */
export const OVERFLOW_RULES: readonly OverflowRule[] = [
  {
    provider: "OpenAI (Chat Completions)",
    pattern: /\bcontext_length_exceeded\b|maximum context length is \d+ tokens/i,
    example: {
      status: 400,
      body: JSON.stringify({
        error: {
          message:
            "This model's maximum context length is 8192 tokens. However, you requested 8213 tokens (6683 in the messages, 730 in the functions, and 800 in the completion). Please reduce the length of the messages, functions, or completion.",
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded",
        },
      }),
    },
    source: "https://github.com/FoundationAgents/OpenManus/issues/62",
  },
  {
    provider: "OpenAI (newer models)",
    pattern: /input exceeds the context window of this model/i,
    example: {
      status: 400,
      body: JSON.stringify({
        error: {
          type: "invalid_request_error",
          code: "context_length_exceeded",
          message:
            "Your input exceeds the context window of this model. Please adjust your input and try again.",
          param: "input",
        },
      }),
    },
    source: "https://github.com/anomalyco/opencode/issues/6071",
  },
  {
    provider: "DeepSeek",
    pattern: /maximum context length is \d+ tokens\. however, you requested \d+ tokens/i,
    example: {
      status: 400,
      body: JSON.stringify({
        error: {
          message:
            "This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.",
          type: "invalid_request_error",
          param: null,
          code: "invalid_request_error",
        },
      }),
    },
    source: "https://github.com/evalstate/fast-agent/issues/621",
  },
  {
    provider: "Together (TGI validation)",
    pattern: /`inputs` tokens \+ `max_new_tokens` must be <= \d+/i,
    example: {
      status: 422,
      body: JSON.stringify({
        error: {
          message:
            "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 2019 `inputs` tokens and 30 `max_new_tokens`",
          type: "invalid_request_error",
        },
      }),
    },
    source:
      "https://github.com/stanford-crfm/helm/pull/2079 (status: https://github.com/bytedance/UI-TARS-desktop/issues/626)",
  },
  {
    provider: "Anthropic (prompt over the window)",
    pattern: /prompt is too long: \d+ tokens > \d+ maximum/i,
    example: {
      status: 400,
      body: JSON.stringify({
        type: "error",
        error: {
          type: "invalid_request_error",
          message: "prompt is too long: 200251 tokens > 200000 maximum",
        },
        request_id: "req_011CWdepJvA2D819tdYYq4h7",
      }),
    },
    source: "https://github.com/boldsoftware/exe.dev/issues/62",
  },
  {
    provider: "Anthropic (prompt plus max_tokens over the window)",
    pattern: /input length and `max_tokens` exceed context limit/i,
    example: {
      status: 400,
      body: JSON.stringify({
        type: "error",
        error: {
          type: "invalid_request_error",
          message:
            "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again",
        },
        request_id: "req_011CUB2XUHWkFnQzxcKBbjpF",
      }),
    },
    source: "https://github.com/docker/docker-agent/issues/569",
  },
  {
    provider: "Anthropic (HTTP 413, request over 32 MB)",
    pattern: /\brequest_too_large\b/,
    status: 413,
    example: {
      status: 413,
      body: JSON.stringify({
        error: { type: "request_too_large", message: "Request exceeds the maximum size" },
      }),
    },
    source: "https://github.com/anthropics/claude-code/issues/3335",
  },
  {
    provider: "OpenRouter",
    pattern: /this endpoint's maximum context length is \d+ tokens/i,
    example: {
      status: 400,
      body: JSON.stringify({
        error: {
          message:
            'This endpoint\'s maximum context length is 131072 tokens. However, you requested about 141607 tokens (10535 of text input, 131072 in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
          code: 400,
          metadata: { provider_name: "Chutes" },
        },
      }),
    },
    source: "https://github.com/Aider-AI/aider/issues/3721",
  },
  {
    provider: "vLLM (OpenAI server, prompt plus max_tokens)",
    pattern: /maximum context length is \d+ tokens/i,
    example: {
      status: 400,
      body: JSON.stringify({
        object: "error",
        message:
          "This model's maximum context length is 6048 tokens. However, you requested 6616 tokens (568 in the messages, 6048 in the completion). Please reduce the length of the messages or completion.",
        type: "BadRequestError",
        param: null,
        code: 400,
      }),
    },
    source: "https://github.com/ogx-ai/ogx/issues/4534",
  },
  {
    provider: "vLLM (prompt alone over max_model_len)",
    pattern: /prompt \(length \d+\) is longer than the maximum model length/i,
    example: {
      status: 400,
      body: JSON.stringify({
        error: {
          message: "The decoder prompt (length 2136) is longer than the maximum model length of 2048. ",
        },
      }),
    },
    source: "https://github.com/OpenBMB/MiniCPM-V/issues/1048",
  },
  {
    provider: "llama.cpp server",
    pattern: /exceeds the available context size|\bexceed_context_size_error\b/i,
    example: {
      status: 400,
      body: JSON.stringify({
        error: {
          code: 400,
          message:
            "request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it",
          type: "exceed_context_size_error",
          n_prompt_tokens: 4390,
          n_ctx: 4096,
        },
      }),
    },
    source: "https://github.com/ggml-org/llama.cpp/issues/19774 (also issues/17284, pull/15780)",
  },
  {
    provider: "llama.cpp server (older builds, HTTP 500)",
    pattern: /context size has been exceeded/i,
    example: {
      status: 500,
      body: JSON.stringify({
        error: { code: 500, message: "Context size has been exceeded.", type: "server_error" },
      }),
    },
    source: "https://github.com/ggml-org/llama.cpp/issues/19774",
  },
  {
    provider: "Ollama",
    pattern: /input length exceeds the context length/i,
    example: { status: 400, body: JSON.stringify({ error: "the input length exceeds the context length" }) },
    source:
      "jeastham1993/zettel-system docs/compound/infrastructure/INFRA-001-ollama-embedding-context-limit.md (also https://github.com/ollama/ollama/issues/17889)",
  },
];
