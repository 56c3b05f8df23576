/**
 * @module The expiry sweep: deletes, in bounded batches, what expired sessions own and rate hits
 * that left their window. An expired session's token hash is kept for a day so that a late call
 * still gets `session_expired`; lookups never depend on the sweep having run.
 */
import type { SweepResult } from '../storage'
import { TOMBSTONE_MS } from '../../domain/session-tombstone'
import { SESSIONS_PER_BATCH } from '../sweep'
import type { SqliteConnection } from './connection'
import { rateCounterTidier } from './rate-limits'

const BATCH = SESSIONS_PER_BATCH.sqlite

/** One bounded batch of the sweep, for the caller to run in one short transaction. */
export function sweepBatch(db: SqliteConnection, windowMs: number, forget: (sessionId: number) => void = () => {}) {
  const expired = db.prepare<{ id: number }>('SELECT id FROM sessions WHERE purged = 0 AND expires_at <= ? LIMIT ?')
  const owned = ['quotes', 'policies', 'idempotency', 'events', 'webhooks', 'request_log'].map((table) =>
    db.prepare(`DELETE FROM ${table} WHERE session_id = ?`),
  )
  const markPurged = db.prepare('UPDATE sessions SET purged = 1 WHERE id = ?')
  const forgetTombstones = db.prepare('DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE purged = 1 AND expires_at <= ? LIMIT ?)')
  const tidyCounters = rateCounterTidier(db, windowMs)
  // Rate counters are walked in key order, one page a batch; '' starts a new pass.
  let counterCursor = ''

  /** One bounded batch of each kind; `done` once nothing is left. */
  function batch(now: number): SweepResult & { done: boolean } {
    const ids = expired.all(now, BATCH)
    for (const { id } of ids) {
      for (const statement of owned) statement.run(id)
      markPurged.run(id)
      forget(id)
    }
    const forgotten = forgetTombstones.run(now - TOMBSTONE_MS, BATCH).changes
    const tidied = tidyCounters(counterCursor, BATCH * 10, now)
    counterCursor = tidied.next ?? ''
    return {
      sessionsPurged: ids.length,
      sessionsForgotten: forgotten,
      rateHitsDeleted: tidied.hitsDeleted,
      done: ids.length < BATCH && forgotten < BATCH && tidied.next === null,
    }
  }

  return batch
}
