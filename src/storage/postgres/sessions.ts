/** @module Session rows on PostgreSQL: only a hash of the cookie token is stored, never the token. */
import type { SessionStore } from '../storage'
import { rowLock, type Queryable } from './driver'

/** Inside a transaction (`locking`), the session is held against the sweep until it ends (FOR SHARE). */
export function sessionStore(sql: Queryable, locking: boolean): SessionStore {
  return {
    async isLive(id, now) {
      const rows = await sql`SELECT 1 FROM sessions WHERE id = ${id} AND expires_at > ${now} AND NOT purged ${rowLock(sql, locking, 'share')}`
      return rows.length > 0
    },
    async clockOffset(id, now) {
      const [row] = await sql<{ offset: number }[]>`
        SELECT clock_offset_ms AS offset FROM sessions WHERE id = ${id} AND expires_at > ${now} AND NOT purged
        ${locking ? sql`FOR NO KEY UPDATE` : sql``}`
      return row ? Number(row.offset) : null
    },
    async setClockOffset(id, offsetMs) {
      await sql`UPDATE sessions SET clock_offset_ms = ${offsetMs} WHERE id = ${id}`
    },
  }
}
