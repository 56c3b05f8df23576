/** @module Stored first answers for `Idempotency-Key`, per session, on PostgreSQL. */
import type { IdempotencyStore } from '../storage'
import type { Queryable } from './driver'

/** Inside a transaction (`locking`), a key's lookup holds it against a concurrent first use (advisory lock). */
export function idempotencyStore(sql: Queryable, locking: boolean): IdempotencyStore {
  return {
    async find(sessionId, keyHash) {
      if (locking) await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`idem ${sessionId} ${keyHash}`}, 0))`
      const [row] = await sql<{ fingerprint: string; response: string }[]>`
        SELECT fingerprint, response FROM idempotency WHERE session_id = ${sessionId} AND key = ${keyHash}`
      return row && { fingerprint: row.fingerprint, response: JSON.parse(row.response) }
    },
    async save(sessionId, keyHash, print, response, now) {
      await sql`
        INSERT INTO idempotency (session_id, key, fingerprint, response, created_at)
        VALUES (${sessionId}, ${keyHash}, ${print}, ${JSON.stringify(response)}, ${now})`
    },
  }
}
