/**
 * The better-dsh dashboard (issue 21): sign in with the server's token (traded for an HttpOnly session
 * cookie, ./api.ts), then the session list
 * (`#/`) or one session (`#/sessions/<id>`). Hash routes keep every URL under the page's own path, so
 * the dashboard works under any prefix the host app mounts the plugin at.
 */
import { render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { Api } from "./api.js";
import "./styles.css";
import { SessionList } from "./views/session-list.js";
import { SessionView } from "./views/session-view.js";

function route(): { session?: string } {
  const match = /^#\/sessions\/([^/?#]+)/.exec(location.hash);
  return match ? { session: decodeURIComponent(match[1]!) } : {};
}

function App() {
  // undefined: not known yet (the cookie, if any, is checked first).
  const [signedIn, setSignedIn] = useState<boolean | undefined>(undefined);
  const [where, setWhere] = useState(route());
  useEffect(() => {
    const onHash = () => setWhere(route());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  const api = useMemo(() => new Api(() => setSignedIn(false)), []);
  useEffect(() => {
    api.signedIn().then(setSignedIn, () => setSignedIn(false));
  }, [api]);
  if (signedIn === undefined) return null;
  if (!signedIn) return <SignIn api={api} onSignedIn={() => setSignedIn(true)} />;
  return where.session ? (
    <SessionView api={api} id={where.session} key={where.session} />
  ) : (
    <SessionList api={api} />
  );
}

function SignIn({ api, onSignedIn }: { api: Api; onSignedIn(): void }) {
  const [value, setValue] = useState("");
  const [error, setError] = useState("");
  return (
    <form
      class="signin"
      data-testid="sign-in"
      onSubmit={(e) => {
        e.preventDefault();
        const token = value.trim();
        if (!token) return;
        api.signIn(token).then(
          (ok) => {
            setValue("");
            if (ok) onSignedIn();
            else setError("That is not the server's token.");
          },
          (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)),
        );
      }}
    >
      <h1>better-dsh</h1>
      <p>
        Enter the server's token (<code>BDSH_SERVER_TOKEN</code>, or the one <code>bdsh serve</code> printed).
        It is sent once; the browser keeps only a session cookie that scripts cannot read.
      </p>
      {error ? (
        <p class="notice error" role="alert">
          {error}
        </p>
      ) : null}
      <input
        name="token"
        type="password"
        autocomplete="off"
        value={value}
        onInput={(e) => setValue((e.target as HTMLInputElement).value)}
      />
      <button type="submit">Sign in</button>
    </form>
  );
}

render(<App />, document.getElementById("app")!);
