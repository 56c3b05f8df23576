/**
 * @module Fair-use counters in SQLite: one row per admitted request per counter key. The check and
 * the count run in one `BEGIN IMMEDIATE` transaction, so parallel requests, from this process or
 * another sharing the file, never admit more than the limit.
 */
import { decide, peek, type CounterReading, type RateStatus, type WindowPolicy } from '../domain/rate-window'
import { immediate, type SqliteDriver } from './driver'

export function rateLimitStore(db: SqliteDriver, policy: WindowPolicy) {
  const read = db.prepare<{ used: number; oldest: number | null }>(
    'SELECT COUNT(*) AS used, MIN(at) AS oldest FROM rate_hits WHERE key = ? AND at > ?',
  )
  const record = db.prepare('INSERT INTO rate_hits (key, at) VALUES (?, ?)')
  const readings = (keys: string[], now: number): CounterReading[] =>
    keys.map((key) => {
      const row = read.get(key, now - policy.windowMs)!
      return { used: row.used, oldestAt: row.oldest }
    })

  return {
    /**
     * Admits one request against every key, or none. `onAdmit` runs inside the same transaction,
     * so a session created for an admitted request exists exactly when the request was counted; it
     * may name one more key to count the request against (a new session's, which is empty).
     */
    admit<T>(keys: string[], now: number, onAdmit: () => { admitted: T; newKey?: string }): { status: RateStatus; admitted?: T } {
      // A refusal writes nothing, and hits only leave the window as time passes: a read outside
      // the write lock is already exact for it, so the 429 path never waits for the lock.
      const early = decide(readings(keys, now), policy, now)
      if (!early.admitted) return { status: early }
      return immediate(db, () => {
        const status = decide(readings(keys, now), policy, now)
        if (!status.admitted) return { status }
        const { admitted, newKey } = onAdmit()
        for (const key of newKey ? [...keys, newKey] : keys) record.run(key, now)
        return { status, admitted }
      })
    },
    /** The allowance left on these keys, counting nothing. */
    peek(keys: string[], now: number): RateStatus {
      return peek(readings(keys, now), policy, now)
    },
  }
}

export type RateLimitStore = ReturnType<typeof rateLimitStore>
