/** The embedded engine's rate windows as tests drive them: each admission written to the log at once. */
import type { RateStatus, WindowPolicy } from '../../../src/domain/rate-window'
import type { SqliteConnection } from '../../../src/storage/sqlite/connection'
import { rateLog, rateWindows } from '../../../src/storage/sqlite/rate-limits'
import { committed } from './storage'

/**
 * The rate windows, loaded from the file's log as the engine loads them at `startedAt`, with each
 * admission's hits written behind at once (the engine writes them at the next transaction).
 */
export function rateLimiter(db: SqliteConnection, policy: WindowPolicy, startedAt = 0) {
  const windows = rateWindows(policy)
  const log = rateLog(db, policy.windowMs)
  windows.load(log.recent(startedAt))
  return {
    ...windows,
    admit<T>(keys: string[], now: number, onAdmit: () => { admitted: T; newKey?: string }): { status: RateStatus; admitted?: T } {
      const result = windows.admit(keys, now, onAdmit)
      committed(db, () => log.write(windows.unwritten.take(), windows))
      return result
    },
  }
}
