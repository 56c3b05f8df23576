/**
 * @module The expiry sweep on PostgreSQL: deletes, in bounded batches, what expired sessions own and
 * rate counters whose hits have all left the window. Each batch claims its rows with SKIP LOCKED, so
 * instances sweeping at once never do the same work or wait for each other.
 */
import type { Sql } from 'postgres'
import type { SweepResult } from '../storage'
import { TOMBSTONE_MS } from '../../domain/session-tombstone'
import { SESSIONS_PER_BATCH } from '../sweep'
import { inTransaction } from './driver'

const BATCH = SESSIONS_PER_BATCH.postgres

/**
 * One batch: claim, then delete in later statements. Under READ COMMITTED each statement sees what
 * committed before it started, so rows written by a transaction that committed while the claim ran
 * (a request that held the session, an admission that held the key) are seen and handled.
 */
export function sweepBatch(sql: Sql<any>, windowMs: number) {
  return (now: number): Promise<SweepResult & { done: boolean }> =>
    inTransaction(sql, async (tx) => {
      const claimed = (
        await tx<{ id: number }[]>`
      SELECT id FROM sessions WHERE NOT purged AND expires_at <= ${now} ORDER BY expires_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`
      ).map((row) => row.id)
      if (claimed.length > 0) {
        await tx`DELETE FROM quotes WHERE session_id = ANY(${claimed}::bigint[])`
        await tx`DELETE FROM policies WHERE session_id = ANY(${claimed}::bigint[])`
        await tx`DELETE FROM idempotency WHERE session_id = ANY(${claimed}::bigint[])`
        await tx`DELETE FROM events WHERE session_id = ANY(${claimed}::bigint[])`
        await tx`DELETE FROM webhooks WHERE session_id = ANY(${claimed}::bigint[])`
        await tx`DELETE FROM request_log WHERE session_id = ANY(${claimed}::bigint[])`
        await tx`UPDATE sessions SET purged = true WHERE id = ANY(${claimed}::bigint[])`
      }
      const forgotten = await tx`
      DELETE FROM sessions WHERE id IN (
        SELECT id FROM sessions WHERE purged AND expires_at <= ${now - TOMBSTONE_MS} LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`
      // Counters whose every hit has left the window, unless an admission holds the key right now (the
      // same advisory lock sandbox_admit takes); a key counted again meanwhile is no longer idle.
      const cutoff = now - windowMs
      const keys = (
        await tx<{ key: string }[]>`
      SELECT key FROM rate_counters WHERE newest <= ${cutoff} AND pg_try_advisory_xact_lock(hashtextextended(key, 0)) LIMIT ${BATCH * 10}`
      ).map((row) => row.key)
      const idle =
        keys.length === 0
          ? []
          : await tx<{ key: string; used: number }[]>`
      DELETE FROM rate_counters WHERE key = ANY(${keys}::text[]) AND newest <= ${cutoff} RETURNING key, used`
      if (idle.length > 0) await tx`DELETE FROM rate_hits WHERE key = ANY(${idle.map((row) => row.key)}::text[])`
      return {
        sessionsPurged: claimed.length,
        sessionsForgotten: forgotten.count,
        rateHitsDeleted: idle.reduce((sum, row) => sum + row.used, 0),
        done: claimed.length < BATCH && forgotten.count < BATCH && keys.length < BATCH * 10,
      }
    })
}
