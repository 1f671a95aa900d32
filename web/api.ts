/**
 * The dashboard's client of the public HTTP API (INTERFACE.md "HTTP API"): nothing else is reached.
 *
 * - URLs are relative to the page, so the dashboard works under whatever prefix the host app mounts the
 *   plugin at (`<prefix>/` serves the page, `<prefix>/v1/...` the API).
 * - The token is entered once and sent to `v1/sign-in`, which answers with an HttpOnly session cookie
 *   (src/server/dashboard-session.ts): the page never keeps the token anywhere, not in `sessionStorage`
 *   (Chromium writes it to the profile on disk, where another local process could read it), not in
 *   `localStorage`, not in a URL. Requests go with the cookie (same origin); a 401 sends the user back to
 *   the sign-in form.
 * - A refusal comes back as `ApiError` with the server's `{error: {code, message}}`.
 */
import type { ChildAgent, LogEvent, PendingInteractions, SessionDetail, SessionView } from "./types.js";

export type Decision = "allow-once" | "allow-session" | "deny" | "cancel";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** An API path (`v1/...`) as an absolute URL beside the page. */
export function apiUrl(path: string): string {
  return new URL(path.replace(/^\//, ""), document.baseURI).toString();
}

export type SessionFilter = {
  workspace?: string;
  archived?: boolean;
  limit?: number;
  /** Text to find in an id or title, searched by the server over every session. */
  query?: string;
  /** The `nextCursor` of the page before. */
  cursor?: string;
  /** Only sessions in this state (`waiting`: the ones that need a person), filtered by the server. */
  state?: string;
};

export type SessionPage = { sessions: SessionView[]; nextCursor?: string };

export type PendingMessage = { id: string; mode: "followup" | "steer"; text: string; createdAt: string };

/** A page of the stored log (`v1/sessions/:id/history`). */
export type HistoryPage = { events: LogEvent[]; lastSeq: number; more: boolean };

/** What a request that never reached the server says (the browser's own words are "Failed to fetch"). */
export const UNREACHABLE = "UNREACHABLE";

export class Api {
  /** The last list page per URL with its ETag: an unchanged list comes back as a 304 with no body. */
  private readonly listCache = new Map<string, { etag: string; page: SessionPage }>();

  constructor(private readonly onUnauthorized: () => void) {}

  /** Request headers; the credential is the session cookie, which the browser attaches by itself. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...extra };
  }

  /** Trades the token for the session cookie; false when the server refuses the token. */
  async signIn(token: string): Promise<boolean> {
    try {
      await this.request("POST", "v1/sign-in", { token });
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return false;
      throw error;
    }
  }

  async signedIn(): Promise<boolean> {
    return (await this.request<{ signedIn: boolean }>("GET", "v1/sign-in")).signedIn;
  }

  signOut(): Promise<unknown> {
    return this.request("POST", "v1/sign-out", {});
  }

  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const init: RequestInit = {
      method,
      headers: this.headers(body === undefined ? {} : { "content-type": "application/json" }),
      cache: "no-store",
      credentials: "same-origin",
    };
    if (body !== undefined) init.body = JSON.stringify(body);
    if (signal) init.signal = signal;
    const response = await this.fetch(apiUrl(path), init);
    const text = await response.text();
    const value: unknown = text ? safeJson(text) : undefined;
    if (!response.ok) {
      const error = (value as { error?: { code?: string; message?: string } } | undefined)?.error;
      if (response.status === 401 && !path.startsWith("v1/sign-in")) this.onUnauthorized();
      throw new ApiError(response.status, error?.code ?? `HTTP_${response.status}`, error?.message ?? text);
    }
    return value as T;
  }

  /** `fetch`, with a request that never reached the server as an `ApiError` in plain words. */
  async fetch(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, init);
    } catch (error) {
      if ((error as { name?: string }).name === "AbortError") throw error;
      throw new ApiError(0, UNREACHABLE, "The server could not be reached; it will be tried again.");
    }
  }

  /**
   * A page of sessions, most recently active first. Asked again with the ETag of the last answer, so a
   * list polled every few seconds costs a 304 while nothing changed; `changed` says whether it did.
   */
  async listSessions(
    filter: SessionFilter = {},
    signal?: AbortSignal,
  ): Promise<SessionPage & { changed: boolean }> {
    const query = new URLSearchParams();
    query.set("limit", String(filter.limit ?? 50));
    if (filter.workspace) query.set("workspace", filter.workspace);
    if (filter.archived) query.set("archived", "true");
    if (filter.query) query.set("query", filter.query);
    if (filter.cursor) query.set("cursor", filter.cursor);
    if (filter.state) query.set("state", filter.state);
    const path = `v1/sessions?${query}`;
    const cached = this.listCache.get(path);
    const init: RequestInit = {
      headers: this.headers(cached ? { "if-none-match": cached.etag } : {}),
      cache: "no-store",
      credentials: "same-origin",
    };
    if (signal) init.signal = signal;
    const response = await this.fetch(apiUrl(path), init);
    if (response.status === 304 && cached) return { ...cached.page, changed: false };
    const text = await response.text();
    const value = safeJson(text) as
      | (SessionPage & { error?: { code?: string; message?: string } })
      | undefined;
    if (!response.ok) {
      if (response.status === 401) this.onUnauthorized();
      const error = value?.error;
      throw new ApiError(response.status, error?.code ?? `HTTP_${response.status}`, error?.message ?? text);
    }
    const page: SessionPage = value ?? { sessions: [] };
    const etag = response.headers.get("etag");
    if (etag) this.listCache.set(path, { etag, page });
    return { ...page, changed: true };
  }

  rename(id: string, title: string | null): Promise<SessionView> {
    return this.request("PATCH", `v1/sessions/${encodeURIComponent(id)}`, { title });
  }

  fork(id: string): Promise<SessionView> {
    return this.request("POST", `v1/sessions/${encodeURIComponent(id)}/fork`, {});
  }

  pendingMessages(id: string): Promise<{ pending: PendingMessage[] }> {
    return this.request("GET", `v1/sessions/${encodeURIComponent(id)}/messages`);
  }

  history(id: string, after: number, signal?: AbortSignal): Promise<HistoryPage> {
    return this.request(
      "GET",
      `v1/sessions/${encodeURIComponent(id)}/history?after=${after}`,
      undefined,
      signal,
    );
  }

  session(id: string): Promise<SessionDetail> {
    return this.request("GET", `v1/sessions/${encodeURIComponent(id)}`);
  }

  createSession(body: { text?: string; title?: string }): Promise<SessionView> {
    return this.request("POST", "v1/sessions", body);
  }

  send(id: string, text: string, mode: "followup" | "steer"): Promise<unknown> {
    return this.request("POST", `v1/sessions/${encodeURIComponent(id)}/messages`, { text, mode });
  }

  cancel(id: string): Promise<{ outcome: "local" | "remote" | "idle"; discarded: number }> {
    return this.request("POST", `v1/sessions/${encodeURIComponent(id)}/cancel`, {});
  }

  archive(id: string, archived: boolean): Promise<unknown> {
    return this.request("POST", `v1/sessions/${encodeURIComponent(id)}/archive`, { archived });
  }

  pending(id: string): Promise<PendingInteractions> {
    return this.request("GET", `v1/sessions/${encodeURIComponent(id)}/approvals`);
  }

  decide(id: string, approvalId: string, decision: Decision): Promise<unknown> {
    return this.request("POST", `v1/sessions/${encodeURIComponent(id)}/approvals`, { approvalId, decision });
  }

  answer(id: string, questionId: string, answers: string[]): Promise<unknown> {
    return this.request("POST", `v1/sessions/${encodeURIComponent(id)}/approvals`, { questionId, answers });
  }

  goal(id: string): Promise<{ goal: Record<string, unknown> | null }> {
    return this.request("GET", `v1/sessions/${encodeURIComponent(id)}/goal`);
  }

  goalAction(
    id: string,
    action: "create" | "edit" | "pause" | "resume" | "clear",
    objective?: string,
  ): Promise<{ message: string; goal: Record<string, unknown> | null }> {
    return this.request("POST", `v1/sessions/${encodeURIComponent(id)}/goal`, {
      action,
      ...(objective ? { objective } : {}),
    });
  }

  agents(id: string): Promise<{ agents: ChildAgent[] }> {
    return this.request("GET", `v1/sessions/${encodeURIComponent(id)}/agents`);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
