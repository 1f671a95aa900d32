/**
 * Every configuration key, its type and its default, in one schema (INTERFACE.md "Config file").
 * Every number the seeds give is a default here, so a test can shrink it.
 *
 * Keys are snake_case as written in YAML. The schema is strict: an unknown key is an error, never ignored.
 */
import { z } from "zod";
import { PROVIDER_NAMES } from "../model/catalog.js";
import { mcpServersSchema } from "./mcp-servers.js";

/** The preset table names the providers; `replay` (a recording, no network) is the one more. */
export const PROVIDERS = [...PROVIDER_NAMES, "replay"] as const;

export const EFFORTS = ["off", "low", "high", "max"] as const;
export const SANDBOX_MODES = ["read-only", "workspace-write", "danger-full-access"] as const;
export const APPROVAL_POLICIES = ["ask", "never", "auto"] as const;
/** What sandboxed commands may reach: nothing, HTTP(S) to listed hosts through the harness's proxy, or all. */
/** The provider names `web_search.provider` takes (tools/web/search/providers.ts has one spec for each). */
export const WEB_SEARCH_PROVIDERS = ["brave", "tavily", "searxng"] as const;

export const SANDBOX_NETWORK_MODES = ["off", "proxy", "on"] as const;

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();
const ratio = z.number().gt(0).lte(1);
/** One remote TTS provider's settings; every key optional (the provider has defaults). */
const ttsRemote = z.strictObject({
  api_key: z.string().min(1).optional(),
  base_url: z.url().optional(),
  model: z.string().min(1).optional(),
  voice: z.string().min(1).optional(),
});

/** T19: one web search provider's endpoint and key; both optional (the provider has defaults). */
const webSearchRemote = z.strictObject({
  api_key: z.string().min(1).optional(),
  base_url: z.url().optional(),
});

export const configSchema = z.strictObject({
  model: z.strictObject({
    provider: z.enum(PROVIDERS),
    id: z.string().min(1),
    base_url: z.url().optional(),
    context_window: positiveInt, // M2, C3
    max_output_tokens: positiveInt, // M2, M26
    effort: z.enum(EFFORTS), // M4, M5
    images: z.boolean().optional(), // M10: overrides the preset's image capability
    /** M20: USD per million tokens, field by field over the price table (src/model/pricing.ts). */
    price: z
      .strictObject({
        input: z.number().nonnegative().optional(),
        cached_input: z.number().nonnegative().optional(),
        output: z.number().nonnegative().optional(),
        cache_write: z.number().nonnegative().optional(),
      })
      .optional(),
  }),
  retry: z.strictObject({
    mode: z.enum(["normal", "always"]), // M18
    max_retries: nonNegativeInt,
    initial_delay_ms: nonNegativeInt,
    max_delay_ms: nonNegativeInt,
    jitter_ratio: z.number().min(0).max(1),
  }),
  stream: z.strictObject({ idle_timeout_ms: positiveInt }), // M19
  /**
   * Durability of appends (store.ts `AppendDurability`): `effects` flushes to disk before a tool touches the
   * world and at a turn's end, and otherwise only commits; `full`/`on` flush every commit; `normal`/`off` none.
   */
  store: z.strictObject({
    sqlite_synchronous: z.enum(["full", "effects", "normal"]),
    postgres_synchronous_commit: z.enum(["on", "effects", "off"]),
    /** Connections this process keeps to PostgreSQL (one per statement in flight; `pg` does not pipeline). */
    postgres_pool_size: positiveInt,
  }),
  compaction: z.strictObject({
    auto: z.boolean(), // C4
    threshold_ratio: ratio,
    headroom_tokens: nonNegativeInt,
    retain_ratio: ratio, // C5
    max_overflow_retries: nonNegativeInt, // C10
    retries: nonNegativeInt, // C4: summarise attempts after the first
    summary_max_tokens: positiveInt, // C6
  }),
  context: z.strictObject({
    time_refresh_ms: nonNegativeInt, // SP5: 0 means every step
    /** SP5: IANA zone for the time context; empty means the process zone. */
    time_zone: z.string(),
  }),
  instructions: z.strictObject({ max_bytes: positiveInt }), // SP6
  tools: z.strictObject({
    max_parallel: positiveInt, // L19
    bash: z.strictObject({
      timeout_ms: positiveInt, // T8
      max_timeout_ms: positiveInt,
      max_output_bytes: positiveInt,
      max_command_bytes: positiveInt, // longer commands are refused before analysis
    }),
  }),
  spill: z.strictObject({
    max_inline_tokens: positiveInt, // C14
    // What blobs may hold: one tool result, and one session in all (tools/spill/spill-quota.ts).
    max_result_bytes: positiveInt,
    max_session_bytes: positiveInt,
  }),
  /** S1 limits and the lifecycle API's request caps (src/subagents/). */
  subagents: z.strictObject({
    max_depth: nonNegativeInt, // S1: 1, a child cannot delegate
    max_active: positiveInt, // S1: 8 per session tree; no queue
    max_goal_chars: positiveInt,
    max_context_chars: positiveInt,
    max_metadata_bytes: positiveInt,
    result_retention_hours: positiveInt,
  }),
  goal: z.strictObject({
    max_rounds: positiveInt, // P3
    blocked_min_rounds: nonNegativeInt, // P5: `blocked` refused before this many rounds
  }),
  /** §9: checks at turn end that keep a stalled turn going, each switchable; bounded per turn. */
  continuation: z.strictObject({
    max_nudges: nonNegativeInt,
    empty_reply: z.boolean(), // M13
    open_todos: z.boolean(), // P1
    announced_action: z.boolean(),
    length_continue: z.boolean(), // M14: one automatic "continue" per turn
    structured_output: z.boolean(), // S4
  }),
  ralph: z.strictObject({ max_rounds: positiveInt, handoff_max_chars: positiveInt }), // P7
  /** L3: a turn that reaches this many steps ends (resumable with a follow-up), however busy the model is. */
  loop: z.strictObject({ max_steps_per_turn: positiveInt }),
  /** A spending cap per session (its own requests, side requests included); each key off when absent. */
  budget: z.strictObject({
    max_tokens: positiveInt.optional(),
    max_cost_usd: z.number().positive().optional(),
  }),
  schedules: z.strictObject({ min_every_seconds: positiveInt, poll_interval_ms: positiveInt }), // S8
  /** A model-written title for a session started without one (presets/session-title.ts). */
  session: z.strictObject({ titles: z.boolean() }),
  sandbox: z.enum(SANDBOX_MODES), // T16, T17
  approval: z.enum(APPROVAL_POLICIES), // T16; auto: S7
  /** S7: the auto-reviewer under `approval: auto`. `medium`: ask a person, deny, or allow (explicit consent). */
  auto_review: z.strictObject({
    timeout_ms: positiveInt,
    max_tokens: positiveInt,
    medium: z.enum(["ask", "deny", "allow"]),
    context_messages: nonNegativeInt,
    max_operation_chars: positiveInt,
  }),
  command_allowlist: z.array(z.string()),
  /** T17: refuse to run commands when the OS sandbox (bwrap) is unavailable. */
  sandbox_required: z.boolean(),
  /** Codex's workspace-write default: sandboxed commands get their own network namespace (bwrap). */
  sandbox_network: z.enum(SANDBOX_NETWORK_MODES),
  /** Hosts (`name`, `*.domain`, `name:port`) the `proxy` mode lets commands reach. */
  sandbox_proxy_allow: z.array(z.string().min(1)),
  web_fetch: z.strictObject({ allow_private: z.boolean() }), // T19
  /**
   * T19: the `web_search` tool's provider (tools/web/search/). Unset: no `web_search` tool. Each provider's
   * key is `api_key` here or its variable (BRAVE_SEARCH_API_KEY, TAVILY_API_KEY, SEARXNG_API_KEY); SearXNG
   * needs `searxng.base_url`, its own instance, and no key.
   */
  web_search: z.strictObject({
    provider: z.enum(WEB_SEARCH_PROVIDERS).optional(),
    brave: webSearchRemote,
    tavily: webSearchRemote,
    searxng: webSearchRemote,
  }),
  plugins: z.strictObject({ allow_tool_override: z.array(z.string()) }),
  repeat_reminder: z.strictObject({
    thresholds: z.array(positiveInt), // G1
    include: z.array(z.string()),
    exclude: z.array(z.string()),
  }),
  terminal: z.strictObject({
    backend: z.string().min(1),
    /**
     * Names or `*`/`?` globs removed from every child process, on top of the default
     * patterns (`*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`, `*CREDENTIAL*`; tools/terminal/child-env.ts).
     */
    strip_env_keys: z.array(z.string()),
    /** Names or globs let through although a default pattern matches; never the harness's own secrets. */
    pass_env_keys: z.array(z.string()),
    /**
     * Hermes `container_persistent`: false gives each session its own sandbox identity on a
     * backend that declares `sessionIsolatedWhenNonpersistent` (docker: a container per session).
     */
    container_persistent: z.boolean(),
    /** The `docker` backend (the docker CLI). Empty strings and 0 mean "docker's default". */
    docker: z.strictObject({
      image: z.string().min(1),
      memory: z.string(),
      cpus: z.string(),
      pids_limit: nonNegativeInt,
      network: z.string(),
    }),
    /** The `ssh` backend. Host-key checking is on unless turned off here. */
    ssh: z.strictObject({
      host: z.string(),
      port: positiveInt,
      user: z.string(),
      /** A private key file; empty: the agent (`$SSH_AUTH_SOCK`) when `use_agent`. */
      identity_file: z.string(),
      use_agent: z.boolean(),
      /** Empty: `~/.ssh/known_hosts`. */
      known_hosts: z.string(),
      strict_host_key_checking: z.boolean(),
      /** The remote working directory; empty: the remote login directory. */
      cwd: z.string(),
      connect_timeout_ms: positiveInt,
    }),
    /** Process receipts (tools runtime): retention of finished background jobs' receipts. */
    receipts: z.strictObject({ max_age_days: positiveInt, max_per_session: positiveInt }),
  }),
  /**
   * Seed 000 streaming-tts.md: spoken replies. `provider` is the voice (`espeak`, the offline
   * default, or a chunked one); `streaming.provider` unset streams with `provider` when it has a chunked API,
   * a name pins a streamer, `auto` takes the first of elevenlabs, gemini, openai, xai with credentials,
   * `off` never streams. Keys resolve config first, then the provider's environment variable (src/tts/credentials.ts).
   */
  tts: z.strictObject({
    provider: z.string().min(1),
    streaming: z.strictObject({ provider: z.string().min(1).optional() }),
    max_chunk_chars: positiveInt, // a run-on sentence is cut at its last clause mark within this
    max_body_bytes: positiveInt, // seed 000: a streamed body is capped at 16 MiB per sentence
    openai: ttsRemote,
    elevenlabs: ttsRemote,
    gemini: ttsRemote,
    xai: ttsRemote,
    espeak: z.strictObject({ voice: z.string().min(1).optional(), speed: positiveInt.optional() }),
  }),
  /** T21: MCP servers whose tools join the registry (./mcp-servers.ts). */
  mcp_servers: mcpServersSchema,
  /** `bdsh serve`: session leases, the wake-up sweep, request limits, shutdown. */
  server: z.strictObject({
    lease_ttl_ms: positiveInt,
    sweep_interval_ms: positiveInt,
    body_limit_bytes: positiveInt,
    max_sessions_per_server: positiveInt,
    max_running_per_server: positiveInt,
    shutdown_grace_ms: nonNegativeInt,
    question_timeout_ms: positiveInt, // T18 timed mode
    /**
     * The listen backlog: connections the kernel queues before `accept`. Node's default (511) overflows when
     * a thousand clients connect at once and the kernel drops the rest; Linux caps it at net.core.somaxconn.
     */
    backlog: positiveInt,
    /** `GET /metrics` without the bearer token (for a scraper on a private network). */
    metrics_public: z.boolean(),
    /** The server's log level (JSON lines on stderr; a human format on a terminal). */
    log_level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
  }),
  /** Traces (exported only when OTEL_EXPORTER_OTLP_ENDPOINT is set). */
  telemetry: z.strictObject({
    /** Prompts and completions as span attributes, through the redactor; off by default. */
    capture_content: z.boolean(),
  }),
});

export type Config = z.infer<typeof configSchema>;

export const DEFAULT_CONFIG: Config = {
  model: {
    provider: "deepseek",
    id: "deepseek-flash",
    context_window: 1_048_576,
    max_output_tokens: 32_768,
    effort: "high",
  },
  retry: { mode: "normal", max_retries: 5, initial_delay_ms: 500, max_delay_ms: 10_000, jitter_ratio: 0.1 },
  stream: { idle_timeout_ms: 300_000 },
  store: { sqlite_synchronous: "effects", postgres_synchronous_commit: "effects", postgres_pool_size: 10 },
  compaction: {
    auto: true,
    threshold_ratio: 0.8,
    headroom_tokens: 65_536,
    retain_ratio: 0.16,
    max_overflow_retries: 1,
    retries: 1,
    summary_max_tokens: 65_536,
  },
  context: { time_refresh_ms: 600_000, time_zone: "" },
  instructions: { max_bytes: 65_536 },
  tools: {
    max_parallel: 10,
    bash: {
      timeout_ms: 60_000,
      max_timeout_ms: 600_000,
      max_output_bytes: 64_000,
      max_command_bytes: 65_536,
    },
  },
  spill: {
    max_inline_tokens: 12_500,
    max_result_bytes: 16 * 1024 * 1024,
    max_session_bytes: 256 * 1024 * 1024,
  },
  goal: { max_rounds: 256, blocked_min_rounds: 3 },
  continuation: {
    max_nudges: 2,
    empty_reply: true,
    open_todos: true,
    announced_action: true,
    length_continue: true,
    structured_output: true,
  },
  subagents: {
    max_depth: 1,
    max_active: 8,
    max_goal_chars: 16_000,
    max_context_chars: 64_000,
    max_metadata_bytes: 4_096,
    result_retention_hours: 168,
  },
  ralph: { max_rounds: 256, handoff_max_chars: 16_384 },
  loop: { max_steps_per_turn: 200 },
  budget: {},
  schedules: { min_every_seconds: 60, poll_interval_ms: 5_000 },
  session: { titles: true },
  sandbox: "workspace-write",
  approval: "ask",
  auto_review: {
    timeout_ms: 60_000,
    max_tokens: 1_024,
    medium: "ask",
    context_messages: 3,
    max_operation_chars: 16_000,
  },
  command_allowlist: [],
  sandbox_required: false,
  sandbox_network: "off",
  sandbox_proxy_allow: [],
  web_fetch: { allow_private: false },
  web_search: { brave: {}, tavily: {}, searxng: {} },
  plugins: { allow_tool_override: [] },
  repeat_reminder: { thresholds: [3, 5, 8], include: [], exclude: [] },
  terminal: {
    backend: "local",
    strip_env_keys: [],
    pass_env_keys: [],
    container_persistent: true,
    docker: { image: "debian:stable-slim", memory: "", cpus: "", pids_limit: 0, network: "" },
    ssh: {
      host: "",
      port: 22,
      user: "",
      identity_file: "",
      use_agent: true,
      known_hosts: "",
      strict_host_key_checking: true,
      cwd: "",
      connect_timeout_ms: 10_000,
    },
    receipts: { max_age_days: 7, max_per_session: 200 },
  },
  tts: {
    provider: "espeak",
    streaming: {},
    max_chunk_chars: 300,
    max_body_bytes: 16 * 1024 * 1024,
    openai: {},
    elevenlabs: {},
    gemini: {},
    xai: {},
    espeak: {},
  },
  mcp_servers: {},
  server: {
    lease_ttl_ms: 10_000,
    sweep_interval_ms: 2_000,
    body_limit_bytes: 1_048_576,
    max_sessions_per_server: 1_000,
    max_running_per_server: 100,
    shutdown_grace_ms: 10_000,
    question_timeout_ms: 300_000,
    backlog: 4096,
    metrics_public: false,
    log_level: "warn",
  },
  telemetry: { capture_content: false },
};

type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/** What one source (a file, the environment, the flags) may set: any subset of the keys. */
export type ConfigLayer = DeepPartial<Config>;

function partialOf(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) {
    const shape: Record<string, z.ZodType> = {};
    for (const [key, value] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      shape[key] = partialOf(value).optional();
    }
    return z.strictObject(shape);
  }
  if (schema instanceof z.ZodOptional) return partialOf(schema.unwrap() as z.ZodType);
  return schema;
}

/** The schema a single layer is checked against: every key optional, unknown keys still rejected. */
export const layerSchema = partialOf(configSchema);
