/**
 * Telling the person that a session needs them: the tab's title (always), and a browser notification when
 * they have allowed it (the page asks only when they press the button for it, never by itself).
 */
const BASE_TITLE = "better-dsh";

/** `(2) 2 need you · better-dsh`, or the plain title when nothing waits. */
export function setTabTitle(waiting: number, what?: string): void {
  const head = waiting > 0 ? `(${waiting}) ${waiting === 1 ? "needs you" : `${waiting} need you`} · ` : "";
  document.title = `${head}${what ? `${what} · ` : ""}${BASE_TITLE}`;
}

export function notificationsAllowed(): boolean {
  return typeof Notification !== "undefined" && Notification.permission === "granted";
}

export function canAskForNotifications(): boolean {
  return typeof Notification !== "undefined" && Notification.permission === "default";
}

export async function askForNotifications(): Promise<boolean> {
  if (typeof Notification === "undefined") return false;
  return (await Notification.requestPermission()) === "granted";
}

/** Sessions already announced as waiting, so each wait is announced once. */
const announced = new Set<string>();

/** A notification for each session that has started waiting since the last call (when allowed). */
export function announceWaiting(
  sessions: { id: string; title: string | null; waitingFor?: string[] }[],
): void {
  const now = new Set(sessions.map((s) => s.id));
  for (const id of [...announced]) if (!now.has(id)) announced.delete(id);
  for (const s of sessions) {
    if (announced.has(s.id)) continue;
    announced.add(s.id);
    if (!notificationsAllowed() || document.hasFocus()) continue;
    const what = s.waitingFor?.includes("approval") ? "an approval" : "an answer";
    const note = new Notification(`${s.title ?? "A session"} needs ${what}`, {
      body: "Open the dashboard to answer it.",
      tag: `bdsh-${s.id}`,
    });
    note.onclick = () => {
      window.focus();
      location.hash = `#/sessions/${encodeURIComponent(s.id)}`;
    };
  }
}
