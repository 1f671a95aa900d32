/**
 * The extension seam (ARCHITECTURE "Layers"): named hooks that plugins listen on. The loop and the tool
 * pipeline only dispatch; behaviour lives in listeners.
 *
 * Three kinds, each keyed by name in an interface that other modules extend by declaration merging:
 * - waterfall (`HookWaterfalls`): listeners run in order, each receives the previous one's value and
 *   returns the next; used for decisions (pre-step, request, request-error, pre/post-execute).
 * - serial (`HookSerials`): listeners run one after another for their effects (turn-stopping, status).
 * - wrapper (`HookWrappers`): listeners wrap the core operation like middleware (tools/execute).
 *
 * Order: listeners run in registration order; `{ prepend: true }` puts one first (DSH's prepended
 * listeners, e.g. the spill policy and time context). A listener that throws propagates: L15 makes the
 * caller end the turn, not the agent.
 */

// biome-ignore lint/suspicious/noEmptyInterface: extended by declaration merging in each layer.
export interface HookWaterfalls {}
// biome-ignore lint/suspicious/noEmptyInterface: extended by declaration merging in each layer.
export interface HookSerials {}
// biome-ignore lint/suspicious/noEmptyInterface: extended by declaration merging in each layer.
export interface HookWrappers {}

export type WaterfallListener<T> = (value: T) => T | Promise<T>;
export type SerialListener<T> = (event: T) => void | Promise<void>;
/** A wrapper entry in `HookWrappers` is `{ input: I; output: O }`. */
export type WrapperListener<I, O> = (input: I, next: (input: I) => Promise<O>) => Promise<O>;

type WrapperSpec = { input: unknown; output: unknown };
type InputOf<S> = S extends WrapperSpec ? S["input"] : never;
type OutputOf<S> = S extends WrapperSpec ? S["output"] : never;

export type ListenOptions = { prepend?: boolean; plugin?: string };

type Entry<F> = { listener: F; plugin: string | undefined };

export class HookBus {
  private readonly waterfalls = new Map<string, Entry<WaterfallListener<unknown>>[]>();
  private readonly serials = new Map<string, Entry<SerialListener<unknown>>[]>();
  private readonly wrappers = new Map<string, Entry<WrapperListener<unknown, unknown>>[]>();

  onWaterfall<K extends keyof HookWaterfalls>(
    name: K,
    listener: WaterfallListener<HookWaterfalls[K]>,
    options: ListenOptions = {},
  ): () => void {
    return add(this.waterfalls, name as string, listener as WaterfallListener<unknown>, options);
  }

  onSerial<K extends keyof HookSerials>(
    name: K,
    listener: SerialListener<HookSerials[K]>,
    options: ListenOptions = {},
  ): () => void {
    return add(this.serials, name as string, listener as SerialListener<unknown>, options);
  }

  onWrap<K extends keyof HookWrappers>(
    name: K,
    listener: WrapperListener<InputOf<HookWrappers[K]>, OutputOf<HookWrappers[K]>>,
    options: ListenOptions = {},
  ): () => void {
    return add(this.wrappers, name as string, listener as WrapperListener<unknown, unknown>, options);
  }

  async waterfall<K extends keyof HookWaterfalls>(
    name: K,
    value: HookWaterfalls[K],
  ): Promise<HookWaterfalls[K]> {
    let current: unknown = value;
    // A listener that answers synchronously is not awaited: an await per listener is a microtask hop each,
    // and the loop runs these hooks several times a step. Order and errors are the same either way.
    for (const { listener } of this.waterfalls.get(name as string) ?? []) {
      const next = listener(current);
      current = isThenable(next) ? await next : next;
    }
    return current as HookWaterfalls[K];
  }

  async serial<K extends keyof HookSerials>(name: K, event: HookSerials[K]): Promise<void> {
    for (const { listener } of this.serials.get(name as string) ?? []) {
      const done = listener(event);
      if (isThenable(done)) await done;
    }
  }

  wrap<K extends keyof HookWrappers>(
    name: K,
    input: InputOf<HookWrappers[K]>,
    core: (input: InputOf<HookWrappers[K]>) => Promise<OutputOf<HookWrappers[K]>>,
  ): Promise<OutputOf<HookWrappers[K]>> {
    const chain = this.wrappers.get(name as string) ?? [];
    // The first registered wrapper is the outermost.
    const run = (index: number, value: unknown): Promise<unknown> => {
      const entry = chain[index];
      if (!entry) return core(value as InputOf<HookWrappers[K]>);
      return entry.listener(value, (next) => run(index + 1, next));
    };
    return run(0, input) as Promise<OutputOf<HookWrappers[K]>>;
  }

  /** Names of the plugins listening on a hook, in order (for diagnostics and tests). */
  listeners(name: string): string[] {
    const all = [
      ...(this.waterfalls.get(name) ?? []),
      ...(this.serials.get(name) ?? []),
      ...(this.wrappers.get(name) ?? []),
    ];
    return all.map((entry) => entry.plugin ?? "(anonymous)");
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

function add<F>(map: Map<string, Entry<F>[]>, name: string, listener: F, options: ListenOptions): () => void {
  const list = map.get(name) ?? [];
  const entry: Entry<F> = { listener, plugin: options.plugin };
  if (options.prepend) list.unshift(entry);
  else list.push(entry);
  map.set(name, list);
  return () => {
    const index = list.indexOf(entry);
    if (index >= 0) list.splice(index, 1);
  };
}
