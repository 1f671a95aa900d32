/**
 * Loads the chat TUI (Ink and React) in the environment a live terminal screen needs, set only for the
 * import and put back at once, so no child process ever inherits the change:
 *
 * - React picks its build from `NODE_ENV` once, when it is first loaded; the development build roughly
 *   doubles each frame's cost (bench/ui). `NODE_ENV=production` in a child would, say, make
 *   `npm install` skip dev dependencies, hence only for the import.
 * - Ink decides once, when it is first loaded, whether it runs under CI (`CI` or `CONTINUOUS_INTEGRATION`
 *   set); there it writes only the transcript and draws the live region (the reply being streamed, the
 *   editor) only at exit. The chat TUI runs only on an interactive terminal, so a `CI` variable left in a
 *   developer's shell (or a CI job driving it in tmux) must not blank its screen.
 */
export async function loadChatTui(): Promise<typeof import("./chat-tui.js")> {
  return withTuiEnvironment(() => import("./chat-tui.js"));
}

const HIDDEN_FOR_IMPORT = ["CI", "CONTINUOUS_INTEGRATION"] as const;

export async function withTuiEnvironment<T>(load: () => Promise<T>): Promise<T> {
  const nodeEnv = process.env.NODE_ENV;
  const hidden = HIDDEN_FOR_IMPORT.filter((key) => key in process.env).map(
    (key) => [key, process.env[key]] as const,
  );
  if (nodeEnv === undefined) process.env.NODE_ENV = "production";
  for (const [key] of hidden) delete process.env[key];
  try {
    return await load();
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    for (const [key, value] of hidden) process.env[key] = value;
  }
}
