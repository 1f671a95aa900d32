/**
 * Where our loop's time goes in the store: a `Proxy` around the store that counts every method call and
 * the time until its promise settles (for SQLite that is the synchronous transaction, fsync included,
 * during which the event loop is blocked). The proxy costs microseconds per call.
 */
import { performance } from "node:perf_hooks";
import type { Store } from "../../src/store/store.js";

export type CallStats = Record<string, { count: number; ms: number }>;

export function countingStore(store: Store): { store: Store; calls: CallStats } {
  const calls: CallStats = {};
  const record = (name: string, started: number): void => {
    const entry = calls[name] ?? { count: 0, ms: 0 };
    entry.count++;
    entry.ms += performance.now() - started;
    calls[name] = entry;
  };
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== "function" || typeof key !== "string") return value;
      return (...args: unknown[]): unknown => {
        const started = performance.now();
        const result: unknown = Reflect.apply(value, target, args);
        if (result instanceof Promise) return result.finally(() => record(key, started));
        record(key, started);
        return result;
      };
    },
  });
  return { store: proxy, calls };
}
