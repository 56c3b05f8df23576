/**
 * @module Fair-use counters in SQLite. Each key keeps its admitted requests per millisecond
 * (`rate_hits`) and a running total with its oldest hit (`rate_counters`), so a check is one row
 * read while no hit has left the window, and a few index seeks once one has, whatever the limit.
 * A refusal is read outside the write lock (`refusal`: exact without it); an admission is read again
 * and counted inside the write transaction of its group commit (`admitLocked`), so parallel requests
 * never admit more than the limit.
 */
import { decide, peek, type CounterReading, type RateStatus, type WindowPolicy } from '../../domain/rate-window'
import type { SqliteConnection } from '../drivers/connection'

/** A counter's hits inside the window, and how many recorded ones have left it but are not yet pruned. */
type Reading = CounterReading & { stale: number }

const EMPTY: Reading = { used: 0, oldestAt: null, stale: 0 }

/** Reading and pruning counters, shared by the rate check and the sweep. */
function counterStatements(db: SqliteConnection, windowMs: number) {
  // One statement, so one snapshot even outside a transaction, whoever else prunes the key. The hits
  // are looked at only once the oldest has left the window.
  const read = db.prepare<{ used: number; stale: number; oldest: number | null }>(
    `SELECT used,
       CASE WHEN oldest > ? THEN 0
            ELSE (SELECT COALESCE(SUM(h.hits), 0) FROM rate_hits h WHERE h.key = c.key AND h.at <= ?) END AS stale,
       CASE WHEN oldest > ? THEN oldest
            ELSE (SELECT h.at FROM rate_hits h WHERE h.key = c.key AND h.at > ? ORDER BY h.at LIMIT 1) END AS oldest
     FROM rate_counters c WHERE c.key = ?`,
  )
  const dropStale = db.prepare('DELETE FROM rate_hits WHERE key = ? AND at <= ?')

  return {
    read(key: string, now: number): Reading {
      const cutoff = now - windowMs
      const row = read.get(cutoff, cutoff, cutoff, cutoff, key)
      return row ? { used: row.used - row.stale, oldestAt: row.oldest, stale: row.stale } : EMPTY
    },
    /** Deletes the hits a reading found stale; the caller then writes the counter's new total. */
    prune(key: string, reading: Reading, now: number): void {
      if (reading.stale > 0) dropStale.run(key, now - windowMs)
    },
  }
}

export function rateLimitStore(db: SqliteConnection, policy: WindowPolicy) {
  const counters = counterStatements(db, policy.windowMs)
  const record = db.prepare('INSERT INTO rate_hits (key, at, hits) VALUES (?, ?, 1) ON CONFLICT (key, at) DO UPDATE SET hits = hits + 1')
  // Requests read the clock before waiting for their batch, so one may be counted after a later one:
  // `newest` only grows, and the oldest hit may be the one counted now.
  const total = db.prepare(
    `INSERT INTO rate_counters (key, used, oldest, newest) VALUES (?, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET used = excluded.used, oldest = excluded.oldest, newest = MAX(newest, excluded.newest)`,
  )
  const readAll = (keys: string[], now: number) => keys.map((key) => counters.read(key, now))

  function count(key: string, reading: Reading, now: number) {
    counters.prune(key, reading, now)
    record.run(key, now)
    total.run(key, reading.used + 1, Math.min(reading.oldestAt ?? now, now), now)
  }

  /** Reads, decides and counts; the caller holds the write lock (a transaction is open). */
  function admitLocked<T>(keys: string[], now: number, onAdmit: () => { admitted: T; newKey?: string }): { status: RateStatus; admitted?: T } {
    const readings = readAll(keys, now)
    const status = decide(readings, policy, now)
    if (!status.admitted) return { status }
    const { admitted, newKey } = onAdmit()
    readings.forEach((reading, i) => count(keys[i]!, reading, now))
    if (newKey) count(newKey, EMPTY, now)
    return { status, admitted }
  }

  /**
   * The refusal these keys get without taking the write lock, or undefined when the request may be
   * admitted (then `admitLocked` decides). A refusal writes nothing, and hits only leave the window
   * as time passes: a read outside the lock is already exact for it, so the 429 path never waits
   * for the lock.
   */
  function refusal(keys: string[], now: number): RateStatus | undefined {
    const early = decide(readAll(keys, now), policy, now)
    return early.admitted ? undefined : early
  }

  return {
    refusal,
    /**
     * Admits one request against every key, or none, inside a transaction the caller has opened.
     * `onAdmit` runs inside the same transaction, so a session created for an admitted request exists
     * exactly when the request was counted; it may name one more key to count the request against (a
     * new session's, which is empty).
     */
    admitLocked,
    /** The allowance left on these keys, counting nothing. */
    peek(keys: string[], now: number): RateStatus {
      return peek(readAll(keys, now), policy, now)
    },
  }
}

/**
 * The sweep's part: tidies one page of counters in key order, after `after`. A key whose hits have
 * all left the window is forgotten; the others lose the hits that have. Answers how many hits went
 * and where the next page starts (null when this page was the last).
 */
export function rateCounterTidier(db: SqliteConnection, windowMs: number) {
  const counters = counterStatements(db, windowMs)
  const page = db.prepare<{ key: string; used: number; oldest: number; newest: number }>(
    'SELECT key, used, oldest, newest FROM rate_counters WHERE key > ? ORDER BY key LIMIT ?',
  )
  const setTotal = db.prepare('UPDATE rate_counters SET used = ?, oldest = ? WHERE key = ?')
  const forgetHits = db.prepare('DELETE FROM rate_hits WHERE key = ?')
  const forgetCounter = db.prepare('DELETE FROM rate_counters WHERE key = ?')

  return function tidy(after: string, size: number, now: number): { hitsDeleted: number; next: string | null } {
    const cutoff = now - windowMs
    const rows = page.all(after, size)
    let hitsDeleted = 0
    for (const { key, used, oldest, newest } of rows) {
      if (newest <= cutoff) {
        forgetHits.run(key)
        forgetCounter.run(key)
        hitsDeleted += used
      } else if (oldest <= cutoff) {
        const reading = counters.read(key, now)
        counters.prune(key, reading, now)
        setTotal.run(reading.used, reading.oldestAt, key)
        hitsDeleted += reading.stale
      }
    }
    return { hitsDeleted, next: rows.length < size ? null : rows.at(-1)!.key }
  }
}
