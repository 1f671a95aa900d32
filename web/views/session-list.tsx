/**
 * The session list: most recently active first, searched by the server over every session (title or id),
 * paged ("Show more"), filtered by state and workspace. Kept fresh by asking again every few seconds with
 * the page's ETag, which costs a 304 while nothing changed. Sessions that wait on a person are marked
 * ("needs you"), counted in the tab title, and announced by a browser notification once the user allows it.
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { type Api, ApiError } from "../api.js";
import {
  announceWaiting,
  askForNotifications,
  canAskForNotifications,
  notificationsAllowed,
  setTabTitle,
} from "../attention.js";
import { draftOf, keepDraft } from "../drafts.js";
import { Icon } from "../icons.js";
import type { SessionView } from "../types.js";
import { StateBadge } from "./state-badge.js";

const REFRESH_MS = 3_000;
const PAGE = 50;
/** The most sessions needing a person the list names (the count says "100+" beyond). */
const WAITING_LIMIT = 100;
const STATES = ["waiting", "running", "idle", "errored", "aborted"] as const;

/** `onDrawn`: called once, when the first rows are on screen. */
export function SessionList({ api, onDrawn }: { api: Api; onDrawn?: () => void }) {
  const [sessions, setSessions] = useState<SessionView[] | undefined>();
  const [nextCursor, setNextCursor] = useState<string | undefined>();
  const [pages, setPages] = useState(1);
  const [search, setSearch] = useState("");
  const [query, setQuery] = useState("");
  const [state, setStateFilter] = useState("all");
  const setState = (next: string) => {
    setStateFilter(next);
    setPages(1);
  };
  const [workspace, setWorkspace] = useState("");
  const [archived, setArchived] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [prompt, setPrompt] = useState(draftOf("new"));
  const [notify, setNotify] = useState(notificationsAllowed());
  const workspaces = useRef(new Set<string>());

  const onDrawnRef = useRef(onDrawn);

  // The search box asks the server once typing pauses.
  useEffect(() => {
    const timer = setTimeout(() => {
      setQuery(search.trim());
      setPages(1);
    }, 250);
    return () => clearTimeout(timer);
  }, [search]);

  // A layout effect: the first page is asked for as soon as the list is mounted. A plain effect waits for a
  // frame to be painted first, which a page that has painted nothing yet may not get for 100 ms.
  useLayoutEffect(() => {
    let stop = false;
    // A 304 means "as this URL last answered", not "as shown": the first load of new filters always draws.
    let drawn = false;
    const filter = {
      archived,
      ...(workspace ? { workspace } : {}),
      ...(query ? { query } : {}),
      ...(state === "all" ? {} : { state }),
    };
    const load = async () => {
      try {
        // The first `pages` pages, each asked with its ETag: unchanged pages cost a 304.
        const rows: SessionView[] = [];
        let cursor: string | undefined;
        let changed = false;
        for (let page = 0; page < pages; page++) {
          const result = await api.listSessions({
            ...filter,
            limit: PAGE,
            ...(cursor ? { cursor } : {}),
          });
          changed ||= result.changed;
          rows.push(...result.sessions);
          cursor = result.nextCursor;
          if (!cursor) break;
        }
        if (stop) return;
        if (changed || !drawn) {
          const call = onDrawnRef.current;
          onDrawnRef.current = undefined;
          if (call) setTimeout(call, 0); // after this render, not inside it
          drawn = true;
          setSessions(rows);
          setNextCursor(cursor);
        }
        setError(undefined);
      } catch (e) {
        if (!stop) setError(e instanceof ApiError ? e.message : String(e));
      }
    };
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [api, workspace, archived, query, state, pages]);

  // The sessions that need a person, over every session (not only the pages shown): the badge, the tab title
  // and the notifications. Asked with its ETag, so an unchanged answer is a 304.
  const [waiting, setWaiting] = useState<SessionView[]>([]);
  useEffect(() => {
    let stop = false;
    const load = () =>
      api.listSessions({ state: "waiting", limit: WAITING_LIMIT }).then(
        (result) => {
          if (!stop && result.changed) setWaiting(result.sessions);
        },
        () => undefined, // the list's own load reports transport errors
      );
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [api]);

  const all = sessions ?? [];
  for (const s of all) if (s.workspace) workspaces.current.add(s.workspace);
  const waitingRef = useRef(waiting);
  waitingRef.current = waiting;
  const waitingKey = waiting.map((s) => s.id).join(",");
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the set of waiting sessions changes
  useEffect(() => {
    setTabTitle(waitingRef.current.length, "sessions");
    announceWaiting(waitingRef.current);
  }, [waitingKey]);

  const create = async (e: Event) => {
    e.preventDefault();
    const text = prompt.trim();
    try {
      const session = await api.createSession(text ? { text } : {});
      setPrompt("");
      keepDraft("new", "");
      location.hash = `#/sessions/${encodeURIComponent(session.id)}`;
    } catch (error) {
      setError(error instanceof ApiError ? error.message : String(error));
    }
  };

  return (
    <div class="list" data-testid="session-list">
      <header class="bar">
        <h1>Sessions</h1>
        {waiting.length ? (
          <button
            type="button"
            class="needs-you-count"
            data-testid="waiting-count"
            onClick={() => setState("waiting")}
          >
            <Icon name="hand" /> {waiting.length}
            {waiting.length === WAITING_LIMIT ? "+" : ""} {waiting.length === 1 ? "needs" : "need"} you
          </button>
        ) : null}
        {notify ? (
          <span class="muted small" data-testid="notifications-on">
            <Icon name="bell" /> notifications on
          </span>
        ) : canAskForNotifications() ? (
          <button
            type="button"
            data-testid="allow-notifications"
            onClick={() => void askForNotifications().then(setNotify)}
          >
            <Icon name="bell" /> Notify me
          </button>
        ) : null}
      </header>
      <div class="filters">
        <input
          name="search"
          type="search"
          aria-label="Search sessions by title or id"
          placeholder="Search title or id"
          value={search}
          onInput={(e) => setSearch((e.target as HTMLInputElement).value)}
        />
        <select
          name="status"
          aria-label="Filter by state"
          value={state}
          onChange={(e) => setState((e.target as HTMLSelectElement).value)}
        >
          <option value="all">any state</option>
          {STATES.map((s) => (
            <option key={s} value={s}>
              {s === "waiting" ? "needs you" : s}
            </option>
          ))}
        </select>
        <select
          name="workspace"
          aria-label="Filter by workspace"
          value={workspace}
          onChange={(e) => {
            setWorkspace((e.target as HTMLSelectElement).value);
            setPages(1);
          }}
        >
          <option value="">every workspace</option>
          {[...workspaces.current].map((w) => (
            <option key={w} value={w}>
              {w}
            </option>
          ))}
        </select>
        <label class="check">
          <input
            type="checkbox"
            checked={archived}
            onChange={() => {
              setArchived(!archived);
              setPages(1);
            }}
          />{" "}
          archived
        </label>
      </div>
      <form class="composer new" onSubmit={create}>
        <textarea
          name="prompt"
          aria-label="First message of a new session"
          placeholder="Start a new session: what should the agent do?"
          value={prompt}
          onInput={(e) => {
            const text = (e.target as HTMLTextAreaElement).value;
            setPrompt(text);
            keepDraft("new", text);
          }}
        />
        <button type="submit" data-testid="create-session">
          Start
        </button>
      </form>
      {error ? (
        <div class="notice error" role="alert" data-testid="error">
          {error}
        </div>
      ) : null}
      {sessions === undefined ? <div class="muted pad">loading…</div> : null}
      {sessions !== undefined && all.length === 0 ? (
        <div class="muted pad" data-testid="no-sessions">
          {query ? `No session matches “${query}”.` : "No sessions here yet."}
        </div>
      ) : null}
      <table class="sessions">
        <caption class="sr-only">Sessions, most recently active first</caption>
        <thead>
          <tr>
            <th scope="col">Session</th>
            <th scope="col">State</th>
            <th scope="col" class="wide-only">
              Workspace
            </th>
            <th scope="col">Last activity</th>
          </tr>
        </thead>
        <tbody>
          {all.map((s) => (
            <tr
              key={s.id}
              data-testid="session-row"
              data-session-id={s.id}
              data-status={s.status}
              data-state={s.state ?? s.status}
              class={s.state === "waiting" ? "needs-you" : undefined}
            >
              <td class="title-cell">
                <a href={`#/sessions/${encodeURIComponent(s.id)}`}>{s.title ?? "(untitled)"}</a>
                <div class="muted mono id">{s.id}</div>
              </td>
              <td>
                <StateBadge state={s.state ?? s.status} waitingFor={s.waitingFor} />
                {s.kind !== "main" ? <span class="tag">{s.kind}</span> : null}
                {s.archived ? <span class="tag">archived</span> : null}
              </td>
              <td class="muted mono wide-only">{s.workspace ?? ""}</td>
              <td class="muted">
                <time dateTime={s.updatedAt}>{new Date(s.updatedAt).toLocaleString()}</time>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {nextCursor ? (
        <div class="pad">
          <button type="button" data-testid="more-sessions" onClick={() => setPages(pages + 1)}>
            Show more
          </button>
        </div>
      ) : null}
    </div>
  );
}
