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
import type { ChildAgent, PendingInteractions, SessionDetail, SessionView } from "./types.js";

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

export type SessionFilter = { workspace?: string; archived?: boolean; limit?: number; before?: string };

export class Api {
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
    const response = await fetch(apiUrl(path), init);
    const text = await response.text();
    const value: unknown = text ? safeJson(text) : undefined;
    if (!response.ok) {
      const error = (value as { error?: { code?: string; message?: string } } | undefined)?.error;
      if (response.status === 401 && !path.startsWith("v1/sign-in")) this.onUnauthorized();
      throw new ApiError(response.status, error?.code ?? `HTTP_${response.status}`, error?.message ?? text);
    }
    return value as T;
  }

  listSessions(filter: SessionFilter = {}, signal?: AbortSignal): Promise<{ sessions: SessionView[] }> {
    const query = new URLSearchParams();
    query.set("limit", String(filter.limit ?? 200));
    if (filter.workspace) query.set("workspace", filter.workspace);
    if (filter.archived) query.set("archived", "true");
    if (filter.before) query.set("before", filter.before);
    return this.request("GET", `v1/sessions?${query}`, undefined, signal);
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

  cancel(id: string): Promise<{ state?: string }> {
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
