/**
 * What the user has typed and not sent, per composer (a session id, or `new` for the list's prompt). Kept
 * in memory for the life of the tab, outside the views, so a sign-out (the server restarted with a new
 * token) and the sign-in after it bring the text back. Never written to storage: a draft can hold secrets.
 */
const drafts = new Map<string, string>();

export function draftOf(key: string): string {
  return drafts.get(key) ?? "";
}

export function keepDraft(key: string, text: string): void {
  if (text) drafts.set(key, text);
  else drafts.delete(key);
}
