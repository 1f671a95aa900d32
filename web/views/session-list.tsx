/**
 * The session list (issue 21 item 2): newest first, searched by title or id, filtered by status and
 * workspace, refreshed every few seconds so statuses stay live; a form starts a new session.
 */
import { useEffect, useState } from "preact/hooks";
import type { Api } from "../api.js";
import type { SessionView } from "../types.js";

const REFRESH_MS = 3_000;

export function SessionList({ api }: { api: Api }) {
  const [sessions, setSessions] = useState<SessionView[] | undefined>();
  const [search, setSearch] = useState("");
  const [status, setStatus] = useState("all");
  const [workspace, setWorkspace] = useState("");
  const [archived, setArchived] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [prompt, setPrompt] = useState("");

  useEffect(() => {
    let stop = false;
    const load = () =>
      api.listSessions({ limit: 500, archived, ...(workspace ? { workspace } : {}) }).then(
        (r) => {
          if (!stop) {
            setSessions(r.sessions);
            setError(undefined);
          }
        },
        (e: unknown) => !stop && setError(String(e)),
      );
    void load();
    const timer = setInterval(load, REFRESH_MS);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [api, workspace, archived]);

  const workspaces = [...new Set((sessions ?? []).map((s) => s.workspace).filter((w): w is string => !!w))];
  const needle = search.trim().toLowerCase();
  const shown = (sessions ?? []).filter(
    (s) =>
      (status === "all" || s.status === status) &&
      (!needle || s.id.toLowerCase().includes(needle) || (s.title ?? "").toLowerCase().includes(needle)),
  );

  const create = async (e: Event) => {
    e.preventDefault();
    const text = prompt.trim();
    try {
      const session = await api.createSession(text ? { text } : {});
      setPrompt("");
      location.hash = `#/sessions/${encodeURIComponent(session.id)}`;
    } catch (error) {
      setError(String(error));
    }
  };

  return (
    <div class="list" data-testid="session-list">
      <header class="bar">
        <h1>Sessions</h1>
        <input
          name="search"
          type="search"
          placeholder="Search title or id"
          value={search}
          onInput={(e) => setSearch((e.target as HTMLInputElement).value)}
        />
        <select
          name="status"
          value={status}
          onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}
        >
          <option value="all">any status</option>
          <option value="running">running</option>
          <option value="idle">idle</option>
        </select>
        <select
          name="workspace"
          value={workspace}
          onChange={(e) => setWorkspace((e.target as HTMLSelectElement).value)}
        >
          <option value="">every workspace</option>
          {workspaces.map((w) => (
            <option key={w} value={w}>
              {w}
            </option>
          ))}
        </select>
        <label>
          <input type="checkbox" checked={archived} onChange={() => setArchived(!archived)} /> archived
        </label>
      </header>
      <form class="composer new" onSubmit={create}>
        <textarea
          name="prompt"
          placeholder="Start a new session: what should the agent do?"
          value={prompt}
          onInput={(e) => setPrompt((e.target as HTMLTextAreaElement).value)}
        />
        <button type="submit" data-testid="create-session">
          Start
        </button>
      </form>
      {error ? <div class="notice error">{error}</div> : null}
      {sessions === undefined ? <div class="muted">loading…</div> : null}
      <table class="sessions">
        <tbody>
          {shown.map((s) => (
            <tr key={s.id} data-testid="session-row" data-session-id={s.id} data-status={s.status}>
              <td>
                <a href={`#/sessions/${encodeURIComponent(s.id)}`}>{s.title ?? "(untitled)"}</a>
                <div class="muted mono">{s.id}</div>
              </td>
              <td>
                <span class={`status ${s.status}`} data-testid="session-status">
                  {s.status}
                </span>
                {s.kind !== "main" ? <span class="tag">{s.kind}</span> : null}
                {s.archived ? <span class="tag">archived</span> : null}
              </td>
              <td class="muted mono">{s.workspace ?? ""}</td>
              <td class="muted">{new Date(s.updatedAt).toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
