/**
 * Findings of one kind, de-duplicated by key, each with every place it was read.
 */
import { LEADS_LIMITS } from './limits.ts';
import type { LeadSource } from './types.ts';

/** Collects findings with their sources, de-duplicated by key; at most {@link LEADS_LIMITS}.perKind of them. */
export class Collector<T extends { sources: LeadSource[] }> {
  readonly items = new Map<string, T>();
  add(key: string, make: () => Omit<T, 'sources'>, source: LeadSource): void {
    const have = this.items.get(key);
    if (have) {
      if (!have.sources.some((s) => s.type === source.type && s.page === source.page)) have.sources.push(source);
      return;
    }
    if (this.items.size >= LEADS_LIMITS.perKind) return;
    this.items.set(key, { ...make(), sources: [source] } as T);
  }
  merge(other: Collector<T>): void {
    for (const [key, item] of other.items) for (const s of item.sources) this.add(key, () => item, s);
  }
  list(): T[] {
    return [...this.items.values()].map((t) => ({ ...t, sources: [...t.sources] }));
  }
}
