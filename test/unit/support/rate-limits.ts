/** The SQLite engine's rate-limit store as tests and child processes drive it, one admission at a time. */
import type { RateStatus, WindowPolicy } from '../../../src/domain/rate-window'
import type { SqliteConnection } from '../../../src/storage/drivers/connection'
import { inTransaction } from '../../../src/storage/sqlite/driver'
import { rateLimitStore } from '../../../src/storage/sqlite/rate-limits'

/**
 * The SQLite rate-limit store with `admit`: the refusal read, then the check and the count in a
 * transaction of their own, which is what the engine's group commit does for a lone admission.
 */
export function rateLimiter(db: SqliteConnection, policy: WindowPolicy) {
  const rates = rateLimitStore(db, policy)
  return {
    ...rates,
    admit<T>(keys: string[], now: number, onAdmit: () => { admitted: T; newKey?: string }): { status: RateStatus; admitted?: T } {
      const refused = rates.refusal(keys, now)
      if (refused) return { status: refused }
      return inTransaction(db, () => rates.admitLocked(keys, now, onAdmit))
    },
  }
}
