/**
 * One session (issue 21 item 2): its events as a conversation, streamed live and resumed after any drop
 * (web/event-stream.ts); the composer (follow-up or steer), cancel, approvals and questions in place, the
 * goal, the children, usage and cost, and the speak button.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { Api, Decision } from "../api.js";
import { Conversation, type Item } from "../conversation.js";
import { EventFeed, type FeedState } from "../event-stream.js";
import { Speaker } from "../speech.js";
import type { ChildAgent, SessionDetail } from "../types.js";
import { VirtualList } from "../virtual-list.js";
import { type ItemActions, ItemView, Text } from "./items.js";

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
  const [error, setError] = useState<string | undefined>();
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
    const refresh = () => {
      api.session(id).then(setDetail, () => undefined);
      api.agents(id).then(
        (r) => setChildren(r.agents),
        () => undefined,
      );
    };
    let reconnectedTimer: ReturnType<typeof setTimeout> | undefined;
    const feed = new EventFeed(api, id, {
      events: (batch) => {
        conversation.add(batch);
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
          if (wasLive.current) {
            setNotice("Reconnected");
            reconnectedTimer = setTimeout(() => setNotice(undefined), 2500);
          }
          wasLive.current = true;
        }
        if (state === "closed" && why) setError(why);
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
        void api.decide(id, approvalId, decision).catch((e: unknown) => setError(String(e))),
      answer: (questionId: string, answers: string[]) =>
        void api.answer(id, questionId, answers).catch((e: unknown) => setError(String(e))),
      open: (child: string) => {
        location.hash = `#/sessions/${encodeURIComponent(child)}`;
      },
    }),
    [api, id],
  );

  const running = conversation.running;
  const live = conversation.live;
  const usage = detail?.usage;
  return (
    <div class="session" data-testid="session-view" data-session-id={id} data-running={String(running)}>
      <header class="bar">
        <a href="#/" class="back">
          ← sessions
        </a>
        <h1>{conversation.title ?? detail?.title ?? id}</h1>
        <span class={`status ${running ? "running" : "idle"}`} data-testid="session-status">
          {running ? "running" : (conversation.lastTurnEnd?.reason ?? "idle")}
        </span>
        <span class={`conn ${feedState}`} data-testid="connection" data-state={feedState}>
          {feedState}
        </span>
        <Speaker sessionId={id} />
        <button type="button" data-testid="cancel" disabled={!running} onClick={() => void api.cancel(id)}>
          Cancel
        </button>
      </header>
      {notice ? (
        <div class="notice" data-testid="reconnect-notice">
          {notice}
        </div>
      ) : null}
      {error ? (
        <div class="notice error" data-testid="error">
          {error}
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
          <Composer api={api} id={id} running={running} onError={setError} />
        </main>
        <aside class="side">
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

function Composer(props: { api: Api; id: string; running: boolean; onError(e: string): void }) {
  const [text, setText] = useState("");
  const [sending, setSending] = useState(false);
  const send = async (mode: "followup" | "steer") => {
    const message = text.trim();
    if (!message) return;
    setSending(true);
    try {
      await props.api.send(props.id, message, mode);
      setText(""); // only once the server took it: a failed send keeps what was typed
    } catch (error) {
      props.onError(String(error));
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

function GoalPanel(props: { api: Api; id: string; goal: Conversation["goal"]; onError(e: string): void }) {
  const [objective, setObjective] = useState("");
  const act = (action: "create" | "pause" | "resume" | "clear", text?: string) =>
    void props.api.goalAction(props.id, action, text).then(
      () => setObjective(""),
      (e: unknown) => props.onError(String(e)),
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
