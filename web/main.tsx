/**
 * The better-dsh dashboard: sign in with the server's token (traded for an HttpOnly session
 * cookie, ./api.ts), then the session list
 * (`#/`) or one session (`#/sessions/<id>`). Hash routes keep every URL under the page's own path, so
 * the dashboard works under any prefix the host app mounts the plugin at.
 */
import { render } from "preact";
import { useEffect, useLayoutEffect, useMemo, useState } from "preact/hooks";
import { Api, ApiError, UNREACHABLE } from "./api.js";
import { setTabTitle } from "./attention.js";
import "./styles.css";
import { SessionList } from "./views/session-list.js";

type SessionViewModule = typeof import("./views/session-view.js");
let sessionViewModule: Promise<SessionViewModule> | undefined;
/**
 * The session view and what only it needs (Markdown, the highlighter, the event feed) come in a chunk of
 * their own, asked for once: the list page does not parse them before it draws.
 */
export function loadSessionView(): Promise<SessionViewModule> {
  sessionViewModule ??= import("./views/session-view.js").catch((failure: unknown) => {
    sessionViewModule = undefined; // a failed load (the server restarting) is tried again next time
    throw failure;
  });
  return sessionViewModule;
}

function LazySessionView({ api, id }: { api: Api; id: string }) {
  const [loaded, setLoaded] = useState<SessionViewModule | undefined>();
  const [failed, setFailed] = useState<string | undefined>();
  useEffect(() => {
    loadSessionView().then(setLoaded, (failure: unknown) =>
      setFailed(failure instanceof Error ? failure.message : String(failure)),
    );
  }, []);
  if (failed)
    return (
      <main class="signin-page">
        <p class="notice error" role="alert">
          The session view could not be loaded ({failed}). Reload the page to try again.
        </p>
      </main>
    );
  if (!loaded) return <main aria-busy="true" class="loading" />;
  return <loaded.SessionView api={api} id={id} />;
}

function route(): { session?: string } {
  const match = /^#\/sessions\/([^/?#]+)/.exec(location.hash);
  return match ? { session: decodeURIComponent(match[1]!) } : {};
}

function App() {
  // undefined: not known yet (the cookie, if any, is checked first).
  const [signedIn, setSignedIn] = useState<boolean | undefined>(undefined);
  // Why the user is asked to sign in again, when they had been signed in.
  const [signedOutWhy, setSignedOutWhy] = useState<string | undefined>();
  const [where, setWhere] = useState(route());
  useEffect(() => {
    const onHash = () => setWhere(route());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  const api = useMemo(
    () =>
      new Api(() => {
        setSignedIn((was) => {
          if (was)
            setSignedOutWhy(
              "The server no longer accepts this sign-in (it may have restarted with a new token). Sign in again: what you were typing is kept.",
            );
          return false;
        });
      }),
    [],
  );
  // As soon as the page is mounted, not after a first paint (which an empty page may wait 100 ms for).
  useLayoutEffect(() => {
    api.signedIn().then(setSignedIn, () => setSignedIn(false));
  }, [api]);
  if (signedIn === undefined) return null;
  if (!signedIn)
    return (
      <SignIn
        api={api}
        notice={signedOutWhy}
        onSignedIn={() => {
          setSignedOutWhy(undefined);
          setSignedIn(true);
        }}
      />
    );
  return where.session ? (
    <LazySessionView api={api} id={where.session} key={where.session} />
  ) : (
    <SessionList api={api} onDrawn={prefetchSessionView} />
  );
}

/** Once the list is drawn, the session view's chunk is fetched while the user reads it. */
function prefetchSessionView(): void {
  const later = window.requestIdleCallback ?? ((run: () => void) => setTimeout(run, 200));
  later(() => {
    loadSessionView().catch(() => undefined);
  });
}

/** The sign-in failure in words a person can act on. */
function signInError(failure: unknown): string {
  if (failure instanceof ApiError) {
    if (failure.code === UNREACHABLE) return "The server could not be reached. Is `bdsh serve` running?";
    if (failure.status === 429) return "Too many attempts: wait a minute, then try again.";
    return `The server refused the sign-in: ${failure.message}`;
  }
  return failure instanceof Error ? failure.message : String(failure);
}

function SignIn({ api, notice, onSignedIn }: { api: Api; notice?: string | undefined; onSignedIn(): void }) {
  const [value, setValue] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  useEffect(() => setTabTitle(0, "sign in"), []);
  return (
    <main class="signin-page">
      <form
        class="signin"
        data-testid="sign-in"
        onSubmit={(e) => {
          e.preventDefault();
          const token = value.trim();
          if (!token) {
            setError("Enter the token first.");
            return;
          }
          setBusy(true);
          api.signIn(token).then(
            (ok) => {
              setBusy(false);
              if (ok) {
                setValue("");
                onSignedIn();
              } else
                setError(
                  "That is not the server's token. Check BDSH_SERVER_TOKEN, or the token `bdsh serve` printed when it started.",
                );
            },
            (failure: unknown) => {
              setBusy(false);
              setError(signInError(failure));
            },
          );
        }}
      >
        <h1>better-dsh</h1>
        {notice ? (
          <p class="notice" role="status" data-testid="signed-out">
            {notice}
          </p>
        ) : null}
        <p>
          Enter the server's token (<code>BDSH_SERVER_TOKEN</code>, or the one <code>bdsh serve</code>{" "}
          printed). It is sent once; the browser keeps only a session cookie that scripts cannot read.
        </p>
        <label for="token">Server token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          value={value}
          aria-invalid={error ? "true" : undefined}
          aria-describedby={error ? "token-error" : undefined}
          onInput={(e) => {
            setValue((e.target as HTMLInputElement).value);
            setError("");
          }}
        />
        {error ? (
          <p class="notice error" role="alert" id="token-error" data-testid="sign-in-error">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}

render(<App />, document.getElementById("app")!);
