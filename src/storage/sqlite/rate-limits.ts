/**
 * @module Fair-use counters of the embedded engine: served from memory, SQLite as their log. The file
 * serves one process (ownership.ts), so the windows in memory are every admission there is: a check
 * and its count are one synchronous step, exact by construction, and no request waits for a write.
 * The hits are written behind (write-behind.ts) as `rate_hits` (admitted requests per key and
 * tenth of a second) with each key's running total in `rate_counters`, and read back at start.
 */
import { decide, peek, type CounterReading, type RateStatus, type WindowPolicy } from '../../domain/rate-window'
import type { SqliteConnection } from './connection'
import { unwritten } from './unwritten'

/** One key's admitted requests per millisecond, oldest first; `head` is the oldest still in the window. */
interface Window {
  ats: number[]
  hits: number[]
  head: number
  used: number
}

/** Hits counted since the last write: per key, per tenth of a second as the log keeps them (`LOG_RESOLUTION_MS`). */
export type UnwrittenHits = Map<string, Map<number, number>>

export function rateWindows(policy: WindowPolicy) {
  const windows = new Map<string, Window>()
  const counted = unwritten<UnwrittenHits>(
    () => new Map(),
    (held) => held.size,
    (taken, newer) => {
      for (const [key, perTenth] of newer) {
        const into = taken.get(key) ?? new Map<number, number>()
        for (const [at, hits] of perTenth) into.set(at, (into.get(at) ?? 0) + hits)
        taken.set(key, into)
      }
      return taken
    },
  )

  /** The key's window with the hits that left it dropped (and their room given back now and then). */
  function current(key: string, now: number): Window | undefined {
    const window = windows.get(key)
    if (!window) return undefined
    const cutoff = now - policy.windowMs
    while (window.head < window.ats.length && window.ats[window.head]! <= cutoff) window.used -= window.hits[window.head++]!
    if (window.head > 64 && window.head * 2 > window.ats.length) {
      window.ats.splice(0, window.head)
      window.hits.splice(0, window.head)
      window.head = 0
    }
    return window
  }

  function reading(key: string, now: number): CounterReading {
    const window = current(key, now)
    return window && window.used > 0 ? { used: window.used, oldestAt: window.ats[window.head]! } : { used: 0, oldestAt: null }
  }

  /** Adds `hits` at `at` to the key's window; a millisecond earlier than its newest joins the newest. */
  function add(key: string, at: number, hits: number): void {
    let window = windows.get(key)
    if (!window) windows.set(key, (window = { ats: [], hits: [], head: 0, used: 0 }))
    const last = window.ats.length - 1
    // Requests read the clock before their turn, so one may come after a later one: counting it a
    // little late keeps it in the window no shorter than it should be.
    if (last >= window.head && window.ats[last]! >= at) window.hits[last]! += hits
    else {
      window.ats.push(at)
      window.hits.push(hits)
    }
    window.used += hits
  }

  function count(key: string, now: number): void {
    add(key, now, 1)
    const at = logged(windows.get(key)!.ats.at(-1)!)
    let perTenth = counted.held.get(key)
    if (!perTenth) counted.held.set(key, (perTenth = new Map()))
    perTenth.set(at, (perTenth.get(at) ?? 0) + 1)
  }

  const readAll = (keys: string[], now: number) => keys.map((key) => reading(key, now))

  return {
    /**
     * Admits one request against every key, or none: reads, decides and counts in one synchronous
     * step. `onAdmit` runs before the count (if it throws, nothing is counted); it may name one more
     * key to count the request against (a new session's, which is empty).
     */
    admit<T>(keys: string[], now: number, onAdmit: () => { admitted: T; newKey?: string }): { status: RateStatus; admitted?: T } {
      const status = decide(readAll(keys, now), policy, now)
      if (!status.admitted) return { status }
      const { admitted, newKey } = onAdmit()
      for (const key of keys) count(key, now)
      if (newKey) count(newKey, now)
      return { status, admitted }
    },
    /** The allowance left on these keys, counting nothing. */
    peek(keys: string[], now: number): RateStatus {
      return peek(readAll(keys, now), policy, now)
    },
    /** The hits counted and not yet written. */
    unwritten: counted,
    /**
     * A key's window as the log should hold it: its hits from the oldest kept on, the oldest and the
     * newest. No clock: the window was pruned at the times of the requests that read it.
     */
    summary(key: string): { used: number; oldest: number; newest: number } | undefined {
      const window = windows.get(key)
      return window && window.used > 0 ? { used: window.used, oldest: window.ats[window.head]!, newest: window.ats.at(-1)! } : undefined
    },
    /** The hits the log holds inside the window, read at start. */
    load(rows: Iterable<{ key: string; at: number; hits: number }>): void {
      for (const { key, at, hits } of rows) add(key, at, hits)
    },
    /** Drops the keys whose every hit has left the window, with their hits not yet written. */
    forgetIdle(now: number): void {
      for (const [key, window] of windows) {
        if (window.ats.at(-1)! > now - policy.windowMs) continue
        windows.delete(key)
        counted.held.delete(key)
      }
    },
  }
}

export type RateWindows = ReturnType<typeof rateWindows>

/** Reading and pruning counters in the log, shared by its writer and the sweep. */
function counterStatements(db: SqliteConnection, windowMs: number) {
  // One statement, so one snapshot. The hits are looked at only once the oldest has left the window.
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
    read(key: string, now: number): CounterReading & { stale: number } {
      const cutoff = now - windowMs
      const row = read.get(cutoff, cutoff, cutoff, cutoff, key)
      return row ? { used: row.used - row.stale, oldestAt: row.oldest, stale: row.stale } : { used: 0, oldestAt: null, stale: 0 }
    },
    dropStale(key: string, now: number): void {
      dropStale.run(key, now - windowMs)
    },
  }
}

/** The log of the windows: writing what they counted, reading it back at start. */
/**
 * How finely the log keeps hits: each is logged at the end of its tenth of a second, so that a
 * write-behind holds a row per key per tenth rather than per millisecond (a busy key counts in most
 * milliseconds). Memory stays exact; read back after a restart, a hit counts up to this much longer.
 */
export const LOG_RESOLUTION_MS = 100

const logged = (at: number) => Math.ceil(at / LOG_RESOLUTION_MS) * LOG_RESOLUTION_MS

/** The log of the windows: writing what they counted, reading it back at start. */
export function rateLog(db: SqliteConnection, windowMs: number) {
  const record = db.prepare('INSERT INTO rate_hits (key, at, hits) VALUES (?, ?, ?) ON CONFLICT (key, at) DO UPDATE SET hits = hits + excluded.hits')
  const total = db.prepare(
    `INSERT INTO rate_counters (key, used, oldest, newest) VALUES (?, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET used = used + ?, oldest = excluded.oldest, newest = MAX(newest, excluded.newest)`,
  )
  const recent = db.prepare<{ key: string; at: number; hits: number }>('SELECT key, at, hits FROM rate_hits WHERE at > ? ORDER BY key, at')
  const dropBefore = db.prepare<{ hits: number }>('DELETE FROM rate_hits WHERE key = ? AND at < ? RETURNING hits')

  return {
    /**
     * Writes the hits taken from `windows`, dropping the logged ones that have left the key's window
     * (older than its oldest hit's tenth), and keeps each key's total the sum of its logged hits.
     */
    write(taken: UnwrittenHits, windows: RateWindows): void {
      for (const [key, perMs] of taken) {
        const summary = windows.summary(key)
        if (!summary) continue // every hit has left the window: the sweep forgets the key
        const from = logged(summary.oldest)
        const dropped = dropBefore.all(key, from).reduce((sum, row) => sum + row.hits, 0)
        let added = 0
        for (const [at, hits] of perMs) {
          if (at < from) continue
          record.run(key, at, hits)
          added += hits
        }
        total.run(key, added, from, logged(summary.newest), added - dropped)
      }
    },
    /** The hits still inside the window at `now`, as logged. */
    recent(now: number): Iterable<{ key: string; at: number; hits: number }> {
      return recent.all(now - windowMs)
    },
  }
}

/**
 * The sweep's part: tidies one page of the log's counters in key order, after `after`. A key whose
 * hits have all left the window is forgotten; the others lose the hits that have. Answers how many
 * hits went and where the next page starts (null when this page was the last).
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
        counters.dropStale(key, now)
        setTotal.run(reading.used, reading.oldestAt, key)
        hitsDeleted += reading.stale
      }
    }
    return { hitsDeleted, next: rows.length < size ? null : rows.at(-1)!.key }
  }
}
