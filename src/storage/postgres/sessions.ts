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
    async byRef(ref, now) {
      const [row] = await sql<{ id: number; token_hash: string; expires_at: number; clock_offset_ms: number }[]>`
        SELECT id, token_hash, expires_at, clock_offset_ms FROM sessions WHERE ref = ${ref} AND expires_at > ${now} AND NOT purged`
      return row && { id: row.id, ref, expiresAt: row.expires_at, clockOffsetMs: Number(row.clock_offset_ms), tokenHash: row.token_hash }
    },
    async setClockOffset(id, offsetMs) {
      await sql`UPDATE sessions SET clock_offset_ms = ${offsetMs} WHERE id = ${id}`
    },
  }
}
