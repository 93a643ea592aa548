// Hot queries are built once per database handle and sent as named prepared statements:
// building a Drizzle query costs about 100 µs of CPU per request (more than the Postgres round
// trip it describes), and a named statement is parsed and planned once per connection.
import type { Db } from './client.ts';

/**
 * `build(db)` once per handle (the service's database, or a transaction's), cached for the
 * handle's lifetime. The statement name must be unique per query text across the service.
 * (services/ledger.ts keeps its per-handle batchers the same way.)
 */
export function preparedPer<T>(build: (db: Db) => T): (db: Db) => T {
  const cache = new WeakMap<Db, T>();
  return (db) => {
    let query = cache.get(db);
    if (query === undefined) {
      query = build(db);
      cache.set(db, query);
    }
    return query;
  };
}
