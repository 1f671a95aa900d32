/**
 * Whether a process of this host still exists: signal 0 checks without sending anything. EPERM means it
 * exists but belongs to another user. A pid can be reused, so "alive" may be another process by now; the
 * callers only ever keep something because of it, never remove.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
