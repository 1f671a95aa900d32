/**
 * `GET /v1/sessions/:id/speech` as a WebSocket (seed 000 streaming-tts.md "Gateway
 * streaming"): the server's own `StreamingTtsAdapter`. For each spoken reply a client gets one JSON header
 * `{"type":"start","turn":N,"mode":"stream"|"whole","format":{"encoding":"pcm_s16le","sample_rate":R,
 * "channels":C}}`, then binary frames of PCM, then `{"type":"end","turn":N}` (or `{"type":"abort",...}`
 * when a streamed turn stops).
 *
 * Invariants:
 * - The upgrade needs the same bearer token as every `/v1` route and, on loopback, a loopback `Host`.
 *   The token travels in the `Authorization` header or, from a browser (whose WebSocket API cannot set
 *   headers: the dashboard), as the subprotocol `bdsh.bearer.<base64url of the token>` next to
 *   `bdsh`, which the server then selects. Never a query parameter, which would land in logs. Refusals
 *   are HTTP 400/401/403/404 answers before the upgrade, in the API's `{error: {code, message}}` shape.
 * - No upgrade request ends the process: a malformed escape in the id is a 400, and whatever fails later
 *   (the store, the handshake) is answered on the socket and logged.
 * - The path carries the plugin's prefix when the host app mounts it under one.
 * - Only the server that drives the session has its deltas: the route attaches to the session's cached agent
 *   when a client connects and again whenever the session's durable log moves (the agent was opened later).
 * - A streamed turn whose audio completed gets no whole-file reply; one that failed before any audio, or that
 *   was joined late, gets the whole-file reply (src/tts/gateway.ts). A steer or a cancel aborts at once.
 * - No credential reaches a client: messages carry formats, turns and short reasons only.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import WebSocket, { WebSocketServer } from "ws";
import type { Config } from "../config/schema.js";
import type { Agent } from "../loop/agent.js";
import type { Store } from "../store/store.js";
import { followAgentTurns } from "../tts/agent-turns.js";
import { type StreamingTtsAdapter, StreamingTtsConsumer } from "../tts/gateway.js";
import type { PcmFormat } from "../tts/pcm.js";
import { builtinTtsRegistry, planSpeech, type SpeechPlan } from "../tts/registry.js";
import { BAD_URL_MESSAGE, MISSING_HOST_MESSAGE, rawErrorResponse } from "./api-error.js";
import { bearerOf, hostAllowed, isLoopbackAddress } from "./auth.js";
import { cookieValue, type DashboardSessions, SESSION_COOKIE, sameOrigin } from "./dashboard-session.js";
import type { SessionRunner } from "./session-runner.js";
import { isStorableText } from "./strict-validation.js";

/** The route's path under the plugin's `prefix` (`""` at the root). */
function speechPath(prefix: string): RegExp {
  const escaped = prefix.replace(/\/+$/, "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^${escaped}/v1/sessions/([^/?#]+)/speech(?:\\?.*)?$`);
}

/** A percent-encoded path segment decoded, or `undefined` when its escapes are malformed. */
function decodedSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined; // URIError: a stray `%` or an escape that is not UTF-8
  }
}

/** The subprotocol a browser offers with its credential, and the one the server answers with. */
export const SPEECH_PROTOCOL = "bdsh";
const BEARER_PROTOCOL = "bdsh.bearer.";

/** The credential of an upgrade: the `Authorization` header, else a `bdsh.bearer.<base64url>` subprotocol. */
export function upgradeCredential(request: IncomingMessage): string {
  const header = bearerOf(request.headers.authorization);
  if (header) return header;
  const offered = String(request.headers["sec-websocket-protocol"] ?? "").split(",");
  const bearer = offered.map((p) => p.trim()).find((p) => p.startsWith(BEARER_PROTOCOL));
  return bearer ? Buffer.from(bearer.slice(BEARER_PROTOCOL.length), "base64url").toString("utf8") : "";
}

export type SpeechRouteOptions = {
  store: Store;
  runner: SessionRunner;
  config: Config;
  env: NodeJS.ProcessEnv;
  tokenMatches: (given: string) => boolean;
  /** The dashboard's session cookies, accepted on a handshake from this server's own origin. */
  sessions?: DashboardSessions;
  allowedHosts: readonly string[];
  /** The providers (default: the built-in ones from `config.tts`). */
  plan?: SpeechPlan;
};

type SessionSpeech = {
  clients: Set<WebSocket>;
  consumer: StreamingTtsConsumer;
  agent?: Promise<Agent>;
  detach?: () => void;
  follow: AbortController;
};

function formatHeader(format: PcmFormat) {
  return {
    encoding: `pcm_s${format.sampleWidth * 8}le`,
    sample_rate: format.sampleRate,
    channels: format.channels,
  };
}

export function registerSpeechRoutes(app: FastifyInstance, options: SpeechRouteOptions): void {
  const sessions = new Map<string, SessionSpeech>();
  // A browser that offered its credential as a subprotocol must get one of its offers back, or it fails the
  // handshake; the credential itself is never echoed.
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => (offered.has(SPEECH_PROTOCOL) ? SPEECH_PROTOCOL : false),
  });
  // A handshake `ws` refuses (a bad key, version, protocol or extension header: all 400s) is answered in the
  // API's shape too, not as `ws`'s plain-text page.
  wss.on("wsClientError", (error: Error, socket: Duplex) =>
    refuse(socket, 400, "BAD_REQUEST", error.message),
  );
  const SPEECH_PATH = speechPath(app.prefix);
  let plan: SpeechPlan | undefined = options.plan;
  const planFor = () =>
    (plan ??= planSpeech(builtinTtsRegistry(), {
      config: options.config.tts,
      env: options.env,
      fetch: globalThis.fetch,
    }));

  const send = (sessionId: string, payload: unknown) => {
    const data = payload instanceof Uint8Array ? payload : JSON.stringify(payload);
    for (const client of sessions.get(sessionId)?.clients ?? [])
      if (client.readyState === WebSocket.OPEN) client.send(data);
  };
  const adapter: StreamingTtsAdapter = {
    supportsStreamingTts: (sessionId) => (sessions.get(sessionId)?.clients.size ?? 0) > 0,
    begin: (sessionId, turn, format) =>
      send(sessionId, { type: "start", turn, mode: "stream", format: formatHeader(format) }),
    write: (sessionId, _turn, pcm) => send(sessionId, pcm),
    finish: (sessionId, turn) => send(sessionId, { type: "end", turn }),
    abort: (sessionId, turn, reason) => send(sessionId, { type: "abort", turn, reason }),
    wholeReply: (sessionId, turn, format, pcm) => {
      send(sessionId, { type: "start", turn, mode: "whole", format: formatHeader(format) });
      send(sessionId, pcm);
      send(sessionId, { type: "end", turn });
    },
  };

  const attach = async (sessionId: string, speech: SessionSpeech) => {
    const cached = options.runner.cachedAgent(sessionId);
    if (!cached || cached === speech.agent) return;
    speech.agent = cached;
    const agent = await cached.catch(() => undefined);
    if (!agent || speech.agent !== cached || sessions.get(sessionId) !== speech) return;
    speech.detach?.();
    const { consumer } = speech;
    speech.detach = followAgentTurns(agent, {
      startTurn: (turn, late) => consumer.startTurn(turn, late),
      delta: (turn, text) => consumer.delta(turn, text),
      stop: (turn) => void consumer.stop(turn),
      endTurn: (turn, text) => void consumer.endTurn(turn, text),
    });
  };

  const open = async (sessionId: string): Promise<SessionSpeech> => {
    const existing = sessions.get(sessionId);
    if (existing) return existing;
    const { tts } = options.config;
    const speech: SessionSpeech = {
      clients: new Set(),
      consumer: new StreamingTtsConsumer({
        sessionId,
        adapter,
        plan: planFor(),
        maxChunkChars: tts.max_chunk_chars,
        maxBodyBytes: tts.max_body_bytes,
        onReport: (report) => app.log.warn({ sessionId, tts: report }, "speech"),
      }),
      follow: new AbortController(),
    };
    sessions.set(sessionId, speech);
    const row = await options.store.getSession(sessionId);
    void (async () => {
      try {
        for await (const _event of options.store.follow(sessionId, {
          after: row?.lastSeq ?? 0,
          signal: speech.follow.signal,
        }))
          await attach(sessionId, speech);
      } catch {
        // the follow ends with the last client
      }
    })();
    await attach(sessionId, speech);
    return speech;
  };

  const close = (sessionId: string, speech: SessionSpeech) => {
    if (speech.clients.size > 0) return;
    speech.follow.abort();
    speech.detach?.();
    sessions.delete(sessionId);
  };

  // Every refusal is an HTTP answer in the API's error shape, then the socket closes.
  const refuse = (socket: Duplex, status: number, code: string, message: string) => {
    if (socket.writable) socket.end(rawErrorResponse(status, code, message));
    else socket.destroy();
  };

  // The upgrade arrives outside Fastify, so nothing else catches what this handler throws: an exception
  // here would end the process. Every step is guarded and every failure is an answer on the socket.
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy()); // a client that goes away mid-answer
    try {
      upgrade(request, socket, head);
    } catch (error) {
      app.log.error({ err: error }, "speech upgrade failed");
      refuse(socket, 500, "INTERNAL", "internal error; see the server log");
    }
  };

  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const match = SPEECH_PATH.exec(request.url ?? "");
    if (!match) {
      if (app.server.listenerCount("upgrade") === 1)
        refuse(socket, 404, "NOT_FOUND", "no WebSocket here; speech is at /v1/sessions/:id/speech");
      return;
    }
    if (
      isLoopbackAddress(request.socket.localAddress) &&
      !hostAllowed(request.headers.host, options.allowedHosts)
    )
      return refuse(
        socket,
        403,
        "FORBIDDEN_HOST",
        "the Host header must be localhost, 127.0.0.1 or [::1] on a loopback server",
      );
    if (!request.headers.host) return refuse(socket, 400, "BAD_REQUEST", MISSING_HOST_MESSAGE);
    // A browser sends the cookie with any page's handshake: only this origin's page may use it.
    const byCookie =
      options.sessions?.valid(cookieValue(request.headers.cookie, SESSION_COOKIE)) === true &&
      sameOrigin(request.headers);
    if (!byCookie && !options.tokenMatches(upgradeCredential(request)))
      return refuse(socket, 401, "UNAUTHORIZED", "missing or wrong bearer token");
    if (request.method !== "GET")
      return refuse(socket, 405, "METHOD_NOT_ALLOWED", `${request.method} is not allowed here; use GET`);
    const sessionId = decodedSegment(match[1] ?? "");
    if (sessionId === undefined) return refuse(socket, 400, "BAD_REQUEST", BAD_URL_MESSAGE);
    if (!isStorableText(sessionId))
      return refuse(
        socket,
        400,
        "BAD_REQUEST",
        "the session id contains a NUL character or an unpaired surrogate",
      );
    const answered = async () => {
      const row = await options.store.getSession(sessionId);
      if (!row) return refuse(socket, 404, "NOT_FOUND", `no session ${sessionId}`);
      const speech = await open(sessionId);
      wss.handleUpgrade(request, socket, head, (client) => {
        speech.clients.add(client);
        client.send(JSON.stringify({ type: "ready", session: sessionId }));
        client.on("close", () => {
          speech.clients.delete(client);
          close(sessionId, speech);
        });
      });
    };
    answered().catch((error: unknown) => {
      app.log.error({ err: error, sessionId }, "speech upgrade failed");
      refuse(socket, 503, "UNAVAILABLE", "the session could not be opened; try again");
    });
  };
  app.server.on("upgrade", onUpgrade);
  app.addHook("preClose", async () => {
    app.server.off("upgrade", onUpgrade);
    for (const [id, speech] of sessions) {
      for (const client of speech.clients) client.terminate();
      speech.clients.clear();
      close(id, speech);
    }
    wss.close();
  });
}
