/**
 * Loads the chat TUI (Ink and React) with React's production build. React picks its build from
 * `NODE_ENV` once, when it is first loaded; the development build roughly doubles each frame's cost
 * (bench/ui). `NODE_ENV` is set only for the import and put back at once, so no child process — where
 * `NODE_ENV=production` would, say, make `npm install` skip dev dependencies — ever inherits it.
 */
export async function loadChatTui(): Promise<typeof import("./chat-tui.js")> {
  return withProductionReact(() => import("./chat-tui.js"));
}

export async function withProductionReact<T>(load: () => Promise<T>): Promise<T> {
  const previous = process.env.NODE_ENV;
  if (previous === undefined) process.env.NODE_ENV = "production";
  try {
    return await load();
  } finally {
    if (previous === undefined) delete process.env.NODE_ENV;
  }
}
