/** Whether `list` begins with the very objects of `prefix` (an identity compare: cheap, and exact for logs). */
export function startsWithSame<T>(list: readonly T[], prefix: readonly T[]): boolean {
  if (prefix.length > list.length) return false;
  for (let i = 0; i < prefix.length; i++) if (list[i] !== prefix[i]) return false;
  return true;
}
