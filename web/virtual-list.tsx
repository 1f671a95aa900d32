/**
 * A virtualised list of items of varying height (it must hold: a session of 10,000 events scrolls
 * smoothly). Only the rows in and near the viewport are in the DOM; the others are a height.
 *
 * - Heights start from an estimate and are measured once a row is drawn (and again when it resizes, as
 *   when a card is expanded); offsets are prefix sums over them, recomputed only when a height changes.
 * - Following: while the view sits at the bottom it stays there as rows arrive or grow (a streaming
 *   reply); once the reader scrolls up it stays where it is, and a row above the viewport that changes
 *   height moves the scroll position by the same amount, so what the reader looks at does not jump.
 */
import { Component, type ComponentChildren } from "preact";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";

export type VirtualListProps<T> = {
  items: readonly T[];
  keyOf: (item: T) => string | number;
  versionOf?: (item: T) => number;
  render: (item: T, index: number) => ComponentChildren;
  /** Bumped by the caller whenever items were added or changed. */
  version: number;
  estimate?: number;
  overscan?: number;
  footer?: ComponentChildren;
  testId?: string;
};

const AT_BOTTOM_PX = 48;

export function VirtualList<T>(props: VirtualListProps<T>) {
  const { items, keyOf, estimate = 72, overscan = 800 } = props;
  const scroller = useRef<HTMLDivElement>(null);
  // Keyed by the row's key as text (the DOM's `data-key`), so a measured height is found again.
  const heights = useRef(new Map<string, number>());
  const following = useRef(true);
  const [viewport, setViewport] = useState({ top: 0, height: 800 });
  const [measured, setMeasured] = useState(0);

  // Prefix sums of heights: offsets[i] is where row i starts; offsets[n] the total.
  // biome-ignore lint/correctness/useExhaustiveDependencies: recomputed when rows or measurements change
  const offsets = useMemo(() => {
    const out = new Float64Array(items.length + 1);
    for (let i = 0; i < items.length; i++)
      out[i + 1] = out[i]! + (heights.current.get(String(keyOf(items[i]!))) ?? estimate);
    return out;
  }, [items.length, props.version, measured, estimate]);

  const total = offsets[items.length] ?? 0;
  const first = Math.max(0, upperBound(offsets, viewport.top - overscan) - 1);
  let last = first;
  while (last < items.length && offsets[last]! < viewport.top + viewport.height + overscan) last++;

  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    following.current = el.scrollHeight - el.scrollTop - el.clientHeight < AT_BOTTOM_PX;
    setViewport({ top: el.scrollTop, height: el.clientHeight });
  }, []);

  // Measure the drawn rows; a row above the viewport that changed height shifts the scroll position.
  const rowsRef = useRef<HTMLDivElement>(null);
  const measure = useCallback(() => {
    const el = scroller.current;
    const rows = rowsRef.current;
    if (!el || !rows) return;
    let changed = false;
    let shift = 0;
    for (const child of Array.from(rows.children) as HTMLElement[]) {
      const key = child.dataset.key;
      const index = Number(child.dataset.index);
      if (key === undefined) continue;
      const height = child.offsetHeight;
      const before = heights.current.get(key) ?? estimate;
      if (Math.abs(before - height) > 0.5) {
        heights.current.set(key, height);
        changed = true;
        if (!following.current && (offsets[index] ?? 0) < el.scrollTop) shift += height - before;
      }
    }
    if (changed) {
      if (shift) el.scrollTop += shift;
      setMeasured((n) => n + 1);
    }
  }, [offsets, estimate]);

  useLayoutEffect(() => {
    measure();
    const el = scroller.current;
    if (el && following.current) el.scrollTop = el.scrollHeight;
  });

  useEffect(() => {
    const rows = rowsRef.current;
    const el = scroller.current;
    if (!rows || !el || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => measure());
    for (const child of Array.from(rows.children)) observer.observe(child);
    observer.observe(el);
    return () => observer.disconnect();
  });

  useEffect(() => {
    const el = scroller.current;
    if (el) setViewport({ top: el.scrollTop, height: el.clientHeight });
  }, []);

  const rows: ComponentChildren[] = [];
  for (let i = first; i < last; i++) {
    const item = items[i]!;
    const key = keyOf(item);
    rows.push(
      <div
        key={key}
        data-key={String(key)}
        data-index={i}
        class="vrow"
        style={{ transform: `translateY(${offsets[i]}px)` }}
      >
        <MemoRow item={item} index={i} version={props.versionOf?.(item) ?? 0} render={props.render} />
      </div>,
    );
  }

  return (
    <div class="vlist" ref={scroller} onScroll={onScroll} data-testid={props.testId} data-rows={items.length}>
      <div class="vspace" style={{ height: `${total}px` }}>
        <div ref={rowsRef}>{rows}</div>
      </div>
      {props.footer}
    </div>
  );
}

type RowProps<T> = {
  item: T;
  index: number;
  version: number;
  render: (item: T, index: number) => ComponentChildren;
};

/** A row re-renders only when its item or its version changes. */
class MemoRow<T> extends Component<RowProps<T>> {
  override shouldComponentUpdate(next: RowProps<T>): boolean {
    return (
      next.item !== this.props.item || next.version !== this.props.version || next.index !== this.props.index
    );
  }
  override render() {
    return <>{this.props.render(this.props.item, this.props.index)}</>;
  }
}

/** The first index whose offset is greater than `value` (binary search over the prefix sums). */
function upperBound(offsets: Float64Array, value: number): number {
  let lo = 0;
  let hi = offsets.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (offsets[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
