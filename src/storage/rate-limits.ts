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
     * so a session created for an admitted request exists exactly when the request was counted.
     */
    admit<T>(keys: string[], now: number, onAdmit: () => T): { status: RateStatus; admitted?: T } {
      return immediate(db, () => {
        const status = decide(readings(keys, now), policy, now)
        if (!status.admitted) return { status }
        const admitted = onAdmit()
        for (const key of keys) record.run(key, now)
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
