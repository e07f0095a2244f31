/** Prepared statements of a node:sqlite connection, compiled once per SQL text and reused. */
import type { DatabaseSync, StatementSync } from 'node:sqlite';

/** @returns a function from SQL text to its cached prepared statement on `db`. */
export function statementCache(db: DatabaseSync): (sql: string) => StatementSync {
  const cache = new Map<string, StatementSync>();
  return (sql) => {
    let s = cache.get(sql);
    if (!s) {
      s = db.prepare(sql);
      cache.set(sql, s);
    }
    return s;
  };
}
