/** @module Session rows: only a hash of the cookie token is stored, never the token. */
import type { SessionRow } from '../storage'
import type { SqliteConnection } from '../drivers/connection'

export function sessionStore(db: SqliteConnection) {
  const byTokenHash = db.prepare<{ id: number; ref: string; expires_at: number }>(
    'SELECT id, ref, expires_at FROM sessions WHERE token_hash = ?',
  )
  const insert = db.prepare<{ id: number }>(
    'INSERT INTO sessions (ref, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?) RETURNING id',
  )
  const live = db.prepare<{ live: number }>('SELECT 1 AS live FROM sessions WHERE id = ? AND expires_at > ? AND purged = 0')
  return {
    /** Whether the session still runs at `now`: not expired, not swept (the seam's `SessionStore.isLive`). */
    isLive(id: number, now: number): boolean {
      return live.get(id, now) !== undefined
    },
    findByTokenHash(tokenHash: string): SessionRow | undefined {
      const row = byTokenHash.get(tokenHash)
      return row && { id: row.id, ref: row.ref, expiresAt: row.expires_at }
    },
    insert(ref: string, tokenHash: string, createdAt: number, expiresAt: number): SessionRow {
      const { id } = insert.get(ref, tokenHash, createdAt, expiresAt)!
      return { id, ref, expiresAt }
    },
  }
}
