/**
 * The better-dsh dashboard (issue 21): sign in with the server's bearer token, then the session list
 * (`#/`) or one session (`#/sessions/<id>`). Hash routes keep every URL under the page's own path, so
 * the dashboard works under any prefix the host app mounts the plugin at.
 */
import { render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { Api, storedToken, storeToken } from "./api.js";
import "./styles.css";
import { SessionList } from "./views/session-list.js";
import { SessionView } from "./views/session-view.js";

function route(): { session?: string } {
  const match = /^#\/sessions\/([^/?#]+)/.exec(location.hash);
  return match ? { session: decodeURIComponent(match[1]!) } : {};
}

function App() {
  const [token, setToken] = useState(storedToken());
  const [where, setWhere] = useState(route());
  useEffect(() => {
    const onHash = () => setWhere(route());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  const api = useMemo(
    () =>
      new Api(token, () => {
        storeToken("");
        setToken("");
      }),
    [token],
  );
  if (!token)
    return (
      <SignIn
        onToken={(t) => {
          storeToken(t);
          setToken(t);
        }}
      />
    );
  return where.session ? (
    <SessionView api={api} id={where.session} key={where.session} />
  ) : (
    <SessionList api={api} />
  );
}

function SignIn({ onToken }: { onToken(token: string): void }) {
  const [value, setValue] = useState("");
  return (
    <form
      class="signin"
      data-testid="sign-in"
      onSubmit={(e) => {
        e.preventDefault();
        if (value.trim()) onToken(value.trim());
      }}
    >
      <h1>better-dsh</h1>
      <p>
        Enter the server's token (<code>BDSH_SERVER_TOKEN</code>, or the one <code>bdsh serve</code> printed).
        It is kept in this tab only.
      </p>
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
