/**
 * @module The database schema, as numbered migrations keyed on `PRAGMA user_version`.
 * Append a migration to change the schema; never edit one that has shipped.
 */
import type { SqliteConnection } from './connection'
import { CANCELLATION, ENDORSEMENTS_AND_IDEMPOTENCY, EVENTS, REQUEST_LOG, SESSION_CLOCK, type ColumnTypes } from '../migrations'
import type { SqliteDriver } from './driver'

const TYPES: ColumnTypes = { bigint: 'INTEGER', integer: 'INTEGER', text: 'TEXT', id: 'INTEGER PRIMARY KEY', keyed: ' WITHOUT ROWID' }

export const MIGRATIONS: string[] = [
  `
  CREATE TABLE sessions (
    id          INTEGER PRIMARY KEY,
    ref         TEXT    NOT NULL UNIQUE,
    token_hash  TEXT    NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    purged      INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX sessions_by_expiry ON sessions (purged, expires_at);

  -- One row per admitted request per counter: the rolling window is exact.
  CREATE TABLE rate_hits (
    key TEXT    NOT NULL,
    at  INTEGER NOT NULL
  );
  CREATE INDEX rate_hits_by_key ON rate_hits (key, at);
  CREATE INDEX rate_hits_by_time ON rate_hits (at);

  -- Plans a search returned, so that issue can check plan_id, trip and ages.
  CREATE TABLE quotes (
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    plan_id    TEXT    NOT NULL,
    trip       TEXT    NOT NULL,
    ages       TEXT    NOT NULL,
    currency   TEXT    NOT NULL,
    plan       TEXT    NOT NULL,
    PRIMARY KEY (session_id, plan_id)
  ) WITHOUT ROWID;

  CREATE TABLE policies (
    id                INTEGER PRIMARY KEY,
    session_id        INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    ref               TEXT    NOT NULL UNIQUE,
    svc_insurance_id  TEXT    NOT NULL UNIQUE,
    plan_id           TEXT    NOT NULL,
    product           TEXT    NOT NULL,
    status            TEXT    NOT NULL,
    trip              TEXT    NOT NULL,
    travellers        TEXT    NOT NULL,
    partner_reference TEXT,
    currency          TEXT    NOT NULL,
    premium_minor     INTEGER NOT NULL,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
  );
  CREATE INDEX policies_by_session ON policies (session_id);

  ` + ENDORSEMENTS_AND_IDEMPOTENCY(TYPES),
  // 2: what produced a plan or policy (simulation or the insurer's UAT), and the insurer's own
  // reference, which never leaves the sandbox.
  `
  ALTER TABLE quotes ADD COLUMN source TEXT NOT NULL DEFAULT 'simulation';
  ALTER TABLE quotes ADD COLUMN upstream_ref TEXT;
  ALTER TABLE policies ADD COLUMN source TEXT NOT NULL DEFAULT 'simulation';
  ALTER TABLE policies ADD COLUMN upstream_ref TEXT;
  `,
  // 3: rate hits grouped per key and millisecond, with a running total per key, so that a check
  // reads one row instead of counting every hit in the window (costly at high limits).
  // The sweep walks rate_counters by key, so no index on time is kept up to date on every request.
  `
  ALTER TABLE rate_hits RENAME TO rate_hits_v1;
  DROP INDEX rate_hits_by_key;
  DROP INDEX rate_hits_by_time;
  CREATE TABLE rate_hits (
    key  TEXT    NOT NULL,
    at   INTEGER NOT NULL,
    hits INTEGER NOT NULL,
    PRIMARY KEY (key, at)
  ) WITHOUT ROWID;
  INSERT INTO rate_hits (key, at, hits) SELECT key, at, COUNT(*) FROM rate_hits_v1 GROUP BY key, at;
  DROP TABLE rate_hits_v1;
  -- A key's hits in rate_hits (some may have left the window until pruned), and when the oldest
  -- and the newest of them were admitted.
  CREATE TABLE rate_counters (
    key    TEXT    PRIMARY KEY,
    used   INTEGER NOT NULL,
    oldest INTEGER NOT NULL,
    newest INTEGER NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO rate_counters (key, used, oldest, newest) SELECT key, SUM(hits), MIN(at), MAX(at) FROM rate_hits GROUP BY key;
  `,
  // 4: Idempotency-Keys are stored only as an HMAC (64 hex digits); a key an older build stored as
  // sent (perhaps an e-mail address) is deleted. A repeat of it after the upgrade issues anew.
  `
  DELETE FROM idempotency WHERE length(key) <> 64 OR key GLOB '*[^0-9a-f]*';
  `,
  // 5: a policy's cancellation and when its certificate is ready (../migrations.ts, as on PostgreSQL).
  CANCELLATION(TYPES),
  // 6: events, webhooks and deliveries (../migrations.ts, as on PostgreSQL).
  EVENTS(TYPES),
  // 7: a clock per session, and cover over time (../migrations.ts, as on PostgreSQL).
  SESSION_CLOCK(TYPES),
  // 8: the request log (../migrations.ts, as on PostgreSQL).
  REQUEST_LOG(TYPES),
]

export const SCHEMA_VERSION = MIGRATIONS.length

/** Brings the file up to the newest schema, in one transaction. */
export function migrate(driver: SqliteDriver): Promise<void> {
  return driver.transaction((db) => {
    const current = db.prepare<{ user_version: number }>('PRAGMA user_version').get()?.user_version ?? 0
    if (current > SCHEMA_VERSION) {
      throw new Error(`database schema version ${current} is newer than this build (${SCHEMA_VERSION})`)
    }
    for (let version = current; version < SCHEMA_VERSION; version++) db.exec(MIGRATIONS[version]!)
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`)
  })
}

/**
 * Caps the file at `megabytes` (0: no cap) through `max_page_count`; a write past it fails with
 * SQLITE_FULL. Answers a function that runs maintenance (the sweep, which may need a few new pages
 * to delete rows) with some headroom above the cap.
 */
export function limitSize(db: SqliteConnection, megabytes: number): <T>(work: () => T) => T {
  if (megabytes === 0) return (work) => work()
  const pageSize = db.prepare<{ page_size: number }>('PRAGMA page_size').get()!.page_size
  const cap = Math.max(1, Math.floor((megabytes * 1_048_576) / pageSize))
  const setCap = (pages: number) => db.exec(`PRAGMA max_page_count = ${pages}`)
  setCap(cap)
  return (work) => {
    setCap(cap + Math.ceil(cap / 10) + 64)
    try {
      return work()
    } finally {
      setCap(cap)
    }
  }
}
