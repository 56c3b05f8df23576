/** @module Stored first answers for `Idempotency-Key`, per session. */
import type { StoredAnswer } from '../storage'
import type { SqliteConnection } from './connection'

export function idempotencyStore(db: SqliteConnection) {
  const find = db.prepare<{ fingerprint: string; response: string }>('SELECT fingerprint, response FROM idempotency WHERE session_id = ? AND key = ?')
  const insert = db.prepare('INSERT INTO idempotency (session_id, key, fingerprint, response, created_at) VALUES (?, ?, ?, ?, ?)')
  return {
    find(sessionId: number, key: string): StoredAnswer | undefined {
      const row = find.get(sessionId, key)
      return row && { fingerprint: row.fingerprint, response: JSON.parse(row.response) }
    },
    save(sessionId: number, key: string, fingerprint: string, response: unknown, now: number): void {
      insert.run(sessionId, key, fingerprint, JSON.stringify(response), now)
    },
  }
}
