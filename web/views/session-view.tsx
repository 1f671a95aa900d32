/**
 * One session: its events as a conversation, streamed live and resumed after any drop
 * (web/event-stream.ts); the composer (follow-up or steer), cancel, approvals and questions in place, the
 * goal, the children, usage and cost, and the speak button.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { type Api, ApiError, type Decision, type PendingMessage, UNREACHABLE } from "../api.js";
import { setTabTitle } from "../attention.js";
import { Conversation, type Item } from "../conversation.js";
import { draftOf, keepDraft } from "../drafts.js";
import { EventFeed, type FeedState } from "../event-stream.js";
import { Icon } from "../icons.js";
import { Speaker } from "../speech.js";
import type { ChildAgent, SessionDetail } from "../types.js";
import { VirtualList } from "../virtual-list.js";
import { type ItemActions, ItemView, Text } from "./items.js";
import { StateBadge } from "./state-badge.js";

/** A failure shown above the conversation; a transport one clears itself once the stream is back. */
type Failure = { text: string; transport: boolean };

function failureOf(error: unknown): Failure {
  if (error instanceof ApiError)
    return { text: error.message || error.code, transport: error.code === UNREACHABLE };
  return { text: String(error), transport: false };
}

/** What a screen reader hears of a batch of events: new requests for the person, and finished turns. */
function announcementOf(batch: readonly { type: string; data: unknown }[]): string | undefined {
  const said: string[] = [];
  for (const event of batch) {
    const data = event.data as Record<string, unknown>;
    if (event.type === "assistant/message") {
      // The reply's text once it is complete (each streamed delta would be read out word by word).
      const blocks = Array.isArray(data.blocks) ? (data.blocks as { type?: string; text?: string }[]) : [];
      const text = blocks
        .filter((b) => b.type === "text")
        .map((b) => b.text ?? "")
        .join(" ")
        .trim();
      if (text) said.push(`Reply: ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`);
    } else if (event.type === "approval/requested") said.push(`Approval needed for ${String(data.tool)}.`);
    else if (event.type === "question/asked") said.push("The agent asks you a question.");
    else if (event.type === "turn/end") said.push(`The turn ended: ${String(data.reason)}.`);
  }
  return said.length ? said.join(" ") : undefined;
}

declare global {
  interface Window {
    /** What the view has received, for the browser tests: every durable seq, in order. */
    bdshDashboard?: { seqs(): number[]; feedState(): FeedState };
  }
}

export function SessionView({ api, id }: { api: Api; id: string }) {
  // biome-ignore lint/correctness/useExhaustiveDependencies: one conversation per session id
  const conversation = useMemo(() => new Conversation(), [id]);
  const [version, setVersion] = useState(0);
  const [feedState, setFeedState] = useState<FeedState>("connecting");
  const [notice, setNotice] = useState<string | undefined>();
  const [detail, setDetail] = useState<SessionDetail | undefined>();
  const [children, setChildren] = useState<ChildAgent[]>([]);
  const [failure, setFailure] = useState<Failure | undefined>();
  const setError = useMemo(() => (error: unknown) => setFailure(failureOf(error)), []);
  const [pending, setPending] = useState<PendingMessage[]>([]);
  const [announce, setAnnounce] = useState("");
  const [drawer, setDrawer] = useState(false);
  const wasLive = useRef(false);
  const feedStateRef = useRef(feedState);
  feedStateRef.current = feedState;

  useEffect(() => {
    let frame = 0;
    const redraw = () => {
      if (!frame)
        frame = requestAnimationFrame(() => {
          frame = 0;
          setVersion(conversation.version);
        });
    };
    const refreshPending = () =>
      api.pendingMessages(id).then(
        (r) => setPending(r.pending),
        () => undefined,
      );
    const refresh = () => {
      api.session(id).then(setDetail, () => undefined);
      void refreshPending();
      api.agents(id).then(
        (r) => setChildren(r.agents),
        () => undefined,
      );
    };
    let reconnectedTimer: ReturnType<typeof setTimeout> | undefined;
    const feed = new EventFeed(api, id, {
      events: (batch) => {
        conversation.add(batch);
        // Queued messages leave the queue as the model takes them (each becomes a user message).
        if (batch.some((e) => e.type === "user/message" || e.type === "turn/start")) void refreshPending();
        if (feedStateRef.current === "live") {
          const said = announcementOf(batch);
          if (said) setAnnounce(said);
        }
        if (
          batch.some(
            (e) => e.type === "turn/end" || e.type.startsWith("subagent/") || e.type === "session/title",
          )
        )
          refresh();
        redraw();
      },
      delta: (delta) => {
        conversation.delta(delta);
        redraw();
      },
      live: (live) => {
        conversation.resumeLive(live);
        redraw();
      },
      state: (state, why) => {
        setFeedState(state);
        if (state === "reconnecting" && wasLive.current) {
          clearTimeout(reconnectedTimer);
          setNotice("Connection lost — reconnecting…");
        }
        if (state === "live") {
          setFailure((f) => (f?.transport ? undefined : f));
          if (wasLive.current) {
            setNotice("Reconnected");
            reconnectedTimer = setTimeout(() => setNotice(undefined), 2500);
          }
          wasLive.current = true;
        }
        if (state === "closed" && why) setFailure({ text: why, transport: false });
      },
    });
    window.bdshDashboard = { seqs: () => [...conversation.seqs], feedState: () => feedStateRef.current };
    feed.start();
    refresh();
    const poll = setInterval(refresh, 10_000);
    return () => {
      feed.stop();
      clearInterval(poll);
      clearTimeout(reconnectedTimer);
      cancelAnimationFrame(frame);
    };
  }, [api, id, conversation]);

  const actions: ItemActions = useMemo(
    () => ({
      sessionId: id,
      decide: (approvalId: string, decision: Decision) =>
        void api.decide(id, approvalId, decision).catch(setError),
      answer: (questionId: string, answers: string[]) =>
        void api.answer(id, questionId, answers).catch(setError),
      copy: (text: string) => void copyText(text).catch(setError),
      open: (child: string) => {
        location.hash = `#/sessions/${encodeURIComponent(child)}`;
      },
    }),
    [api, id, setError],
  );

  const running = conversation.running;
  const live = conversation.live;
  const usage = detail?.usage;
  const waitingFor = running
    ? [
        ...(conversation.pendingApprovals().length ? ["approval"] : []),
        ...(conversation.pendingQuestions().length ? ["question"] : []),
      ]
    : [];
  const lastReason = conversation.lastTurnEnd?.reason;
  const state = waitingFor.length
    ? "waiting"
    : running
      ? "running"
      : lastReason === "error"
        ? "errored"
        : lastReason === "aborted" || lastReason === "interrupted"
          ? "aborted"
          : "idle";
  const title = conversation.title ?? detail?.title ?? null;
  useEffect(() => setTabTitle(state === "waiting" ? 1 : 0, title ?? id.slice(0, 13)), [state, title, id]);

  const cancel = async () => {
    const queued = pending;
    try {
      const result = await api.cancel(id);
      const what = result.discarded
        ? `Cancelled. Discarded ${result.discarded} queued message${result.discarded === 1 ? "" : "s"}${
            queued.length ? `: ${queued.map((m) => `“${m.text.slice(0, 60)}”`).join(", ")}` : ""
          }.`
        : "Cancelled; no queued message was discarded.";
      setNotice(what);
      setPending([]);
    } catch (error) {
      setError(error);
    }
  };

  return (
    <div
      class="session"
      data-testid="session-view"
      data-session-id={id}
      data-running={String(running)}
      data-state={state}
    >
      <header class="bar">
        <a href="#/" class="back">
          <Icon name="back" /> sessions
        </a>
        <SessionTitle api={api} id={id} title={title} onError={setError} />
        <StateBadge state={state} waitingFor={waitingFor} />
        <span class={`conn ${feedState}`} data-testid="connection" data-state={feedState}>
          {feedState}
        </span>
        <div class="actions">
          <Speaker sessionId={id} />
          <button type="button" data-testid="cancel" disabled={!running} onClick={() => void cancel()}>
            <Icon name="stop" /> Cancel
          </button>
          <SessionActions
            api={api}
            id={id}
            archived={detail?.archived ?? false}
            onError={setError}
            onDone={setNotice}
          />
          <button
            type="button"
            class="drawer-toggle"
            data-testid="details-toggle"
            aria-expanded={drawer}
            aria-controls="session-details"
            onClick={() => setDrawer(!drawer)}
          >
            <Icon name="menu" /> Details
          </button>
        </div>
      </header>
      <div class="sr-only" aria-live="polite" data-testid="announcer">
        {announce}
      </div>
      {notice ? (
        <div class="notice" role="status" data-testid="reconnect-notice">
          {notice}
        </div>
      ) : null}
      {failure ? (
        <div class="notice error" role="alert" data-testid="error" data-transport={String(failure.transport)}>
          {failure.text}
          <button type="button" class="link" onClick={() => setFailure(undefined)}>
            dismiss
          </button>
        </div>
      ) : null}
      <div class="body">
        <main class="conversation">
          <VirtualList<Item>
            items={conversation.items}
            version={version}
            keyOf={(item) => item.key}
            versionOf={(item) => item.version}
            render={(item) => <ItemView item={item} actions={actions} />}
            testId="conversation"
            footer={
              live && (live.text || live.reasoning) ? (
                <div class="msg assistant streaming" data-testid="streaming">
                  {live.reasoning && !live.text ? <div class="muted">thinking…</div> : null}
                  <Text text={live.text} />
                </div>
              ) : running ? (
                <div class="muted working" data-testid="working">
                  working…
                </div>
              ) : null
            }
          />
          <PendingList pending={pending} />
          <Composer
            api={api}
            id={id}
            running={running}
            onError={setError}
            onSent={() =>
              void api.pendingMessages(id).then(
                (r) => setPending(r.pending),
                () => undefined,
              )
            }
          />
        </main>
        <aside class={`side${drawer ? " open" : ""}`} id="session-details" aria-label="Session details">
          <section>
            <h2>Usage</h2>
            {usage ? (
              <dl data-testid="usage">
                <dt>requests</dt>
                <dd>{usage.requests}</dd>
                <dt>input</dt>
                <dd>
                  {usage.input} (+{usage.cachedInput} cached)
                </dd>
                <dt>output</dt>
                <dd>{usage.output}</dd>
                <dt>cost</dt>
                <dd>{usage.cost === null ? "unknown price" : `$${usage.cost.toFixed(4)}`}</dd>
                {usage.withChildren.requests !== usage.requests ? (
                  <>
                    <dt>with children</dt>
                    <dd>
                      {usage.withChildren.output} out,{" "}
                      {usage.withChildren.cost === null ? "?" : `$${usage.withChildren.cost.toFixed(4)}`}
                    </dd>
                  </>
                ) : null}
              </dl>
            ) : (
              <div class="muted">…</div>
            )}
          </section>
          <GoalPanel api={api} id={id} goal={conversation.goal} onError={setError} />
          <section>
            <h2>Children</h2>
            {children.length === 0 ? <div class="muted">none</div> : null}
            <ul class="children" data-testid="children">
              {children.map((c) => (
                <li key={c.id} data-state={c.state}>
                  <a href={`#/sessions/${encodeURIComponent(c.id)}`}>{c.id.slice(0, 13)}</a>{" "}
                  <span class={`tag ${String(c.state).toLowerCase()}`}>{c.state}</span>{" "}
                  <span class="muted">{c.task}</span>
                </li>
              ))}
            </ul>
          </section>
        </aside>
      </div>
    </div>
  );
}

/** Several items may come from one event (reasoning, text and tool calls of one message): keys stay unique. */

function Composer(props: {
  api: Api;
  id: string;
  running: boolean;
  onError(e: unknown): void;
  onSent(): void;
}) {
  const [text, setTextState] = useState(draftOf(props.id));
  const setText = (value: string) => {
    setTextState(value);
    keepDraft(props.id, value);
  };
  const [sending, setSending] = useState(false);
  const send = async (mode: "followup" | "steer") => {
    const message = text.trim();
    if (!message) return;
    setSending(true);
    try {
      await props.api.send(props.id, message, mode);
      setText(""); // only once the server took it: a failed send keeps what was typed
      props.onSent();
    } catch (error) {
      props.onError(error);
    } finally {
      setSending(false);
    }
  };
  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send(props.running ? "steer" : "followup");
      }}
    >
      <textarea
        name="message"
        aria-label={props.running ? "Steer the running turn, or queue a follow-up" : "Message"}
        placeholder={props.running ? "Steer the running turn, or queue a follow-up…" : "Send a message…"}
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            void send(props.running ? "steer" : "followup");
          }
        }}
      />
      <div class="buttons">
        <button
          type="button"
          data-testid="send-followup"
          disabled={sending}
          onClick={() => void send("followup")}
        >
          Follow-up
        </button>
        <button
          type="button"
          data-testid="send-steer"
          disabled={sending || !props.running}
          onClick={() => void send("steer")}
        >
          Steer
        </button>
      </div>
    </form>
  );
}

/** Messages sent and not yet taken by the model: shown until they become part of the conversation. */
function PendingList({ pending }: { pending: PendingMessage[] }) {
  if (pending.length === 0) return null;
  return (
    <section class="pending" aria-label="Queued messages" data-testid="pending-messages">
      {pending.map((m) => (
        <div key={m.id} class="pending-item" data-testid="pending" data-mode={m.mode}>
          <span class="tag">{m.mode === "steer" ? "steer, next step" : "follow-up, next turn"}</span>{" "}
          <span class="pending-text">{m.text}</span> <span class="muted">waiting for the model</span>
        </div>
      ))}
    </section>
  );
}

/** The title, and a rename form in its place when asked. */
function SessionTitle(props: { api: Api; id: string; title: string | null; onError(e: unknown): void }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState("");
  if (!editing)
    return (
      <h1 class="title">
        <span class="title-text">{props.title ?? props.id}</span>
        <button
          type="button"
          class="icon-button"
          data-testid="rename"
          aria-label="Rename"
          title="Rename"
          onClick={() => {
            setValue(props.title ?? "");
            setEditing(true);
          }}
        >
          <Icon name="pencil" />
        </button>
      </h1>
    );
  return (
    <form
      class="rename"
      onSubmit={(e) => {
        e.preventDefault();
        props.api.rename(props.id, value.trim() || null).then(
          () => setEditing(false),
          (error: unknown) => props.onError(error),
        );
      }}
    >
      <input
        name="title"
        aria-label="New title"
        value={value}
        maxLength={500}
        onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        ref={(el) => el?.focus()}
      />
      <button type="submit" data-testid="rename-save">
        Save
      </button>
      <button type="button" onClick={() => setEditing(false)}>
        Keep
      </button>
    </form>
  );
}

/** Fork, archive (or unarchive) and copy the id. */
function SessionActions(props: {
  api: Api;
  id: string;
  archived: boolean;
  onError(e: unknown): void;
  onDone(text: string): void;
}) {
  const { api, id } = props;
  return (
    <>
      <button
        type="button"
        data-testid="fork"
        onClick={() =>
          void api.fork(id).then((child) => {
            location.hash = `#/sessions/${encodeURIComponent(child.id)}`;
          }, props.onError)
        }
      >
        <Icon name="fork" /> Fork
      </button>
      <button
        type="button"
        data-testid="archive"
        onClick={() =>
          void api
            .archive(id, !props.archived)
            .then(() => props.onDone(props.archived ? "Unarchived." : "Archived."), props.onError)
        }
      >
        <Icon name="archive" /> {props.archived ? "Unarchive" : "Archive"}
      </button>
      <button
        type="button"
        data-testid="copy-id"
        onClick={() => void copyText(id).then(() => props.onDone("Session id copied."), props.onError)}
      >
        <Icon name="copy" /> Copy id
      </button>
    </>
  );
}

/** The clipboard, or a hidden field and the copy command where the API is missing (plain http). */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const field = document.createElement("textarea");
  field.value = text;
  field.setAttribute("readonly", "");
  field.style.position = "fixed";
  field.style.opacity = "0";
  document.body.append(field);
  field.select();
  const ok = document.execCommand("copy");
  field.remove();
  if (!ok) throw new Error("The browser did not allow copying.");
}

function GoalPanel(props: { api: Api; id: string; goal: Conversation["goal"]; onError(e: unknown): void }) {
  const [objective, setObjective] = useState("");
  const act = (action: "create" | "pause" | "resume" | "clear", text?: string) =>
    void props.api.goalAction(props.id, action, text).then(
      () => setObjective(""),
      (e: unknown) => props.onError(e),
    );
  const g = props.goal;
  return (
    <section data-testid="goal">
      <h2>Goal</h2>
      {g && g.phase !== undefined ? (
        <div>
          <div>{g.objective}</div>
          <div class="muted" data-testid="goal-state">
            {g.phase}, round {g.roundsStarted}/{g.maxRounds}
            {g.blockedReason ? ` — ${g.blockedReason}` : ""}
          </div>
          <div class="buttons">
            {g.phase === "active" ? (
              <button type="button" onClick={() => act("pause")}>
                Pause
              </button>
            ) : null}
            {g.phase === "paused" || g.phase === "blocked" ? (
              <button type="button" onClick={() => act("resume")}>
                Resume
              </button>
            ) : null}
            <button type="button" onClick={() => act("clear")}>
              Clear
            </button>
          </div>
        </div>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (objective.trim()) act("create", objective.trim());
          }}
        >
          <input
            name="objective"
            aria-label="Goal objective"
            placeholder="An objective to work towards"
            value={objective}
            onInput={(e) => setObjective((e.target as HTMLInputElement).value)}
          />
          <button type="submit">Set goal</button>
        </form>
      )}
    </section>
  );
}
