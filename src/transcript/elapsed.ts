/** How long something took, for people (the status line, tool cards, the dashboard's cards). */

/** `950ms` → `0s`, `12_400` → `12s`, `75_000` → `1m 15s`, `3_725_000` → `1h 2m`. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}
