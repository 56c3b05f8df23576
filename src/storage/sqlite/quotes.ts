/**
 * @module Plans a search returned, recorded against the session for issue to check. Recorded in
 * memory and written behind (write-behind.ts): a search never waits for a write. Reads look at what
 * is not written yet first, then at the file.
 */
import { quoteFromRow, quoteToRow, unsavedQuotes, type QuoteRow } from '../rows'
import type { Quote } from '../storage'
import type { SqliteConnection } from './connection'
import { unwritten } from './unwritten'

/** Quotes recorded since the last write: per session, per plan id. */
export type UnwrittenQuotes = Map<number, Map<string, Quote>>

export function quoteStore(db: SqliteConnection) {
  const insert = db.prepare(
    // A plan_id is a digest of everything that priced it, so a repeated search changes at most
    // where the plan came from: only then is the row written again. A session the sweep purged
    // meanwhile gets nothing.
    `INSERT INTO quotes (session_id, plan_id, trip, ages, currency, plan, source, upstream_ref)
     SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ? AND purged = 0)
     ON CONFLICT (session_id, plan_id) DO UPDATE SET plan = excluded.plan, source = excluded.source, upstream_ref = excluded.upstream_ref
     WHERE source IS NOT excluded.source OR upstream_ref IS NOT excluded.upstream_ref`,
  )
  const recorded = db.prepare<Pick<QuoteRow, 'plan_id' | 'source' | 'upstream_ref'>>(
    'SELECT plan_id, source, upstream_ref FROM quotes WHERE session_id = ? AND plan_id IN (SELECT value FROM json_each(?))',
  )
  const byPlanId = db.prepare<QuoteRow>('SELECT plan_id, trip, ages, currency, plan, source, upstream_ref FROM quotes WHERE session_id = ? AND plan_id = ?')
  // A later search of the same plan in a session replaces what an earlier one recorded.
  const pending = unwritten<UnwrittenQuotes>(
    () => new Map(),
    (held) => held.size,
    (taken, newer) => {
      for (const [sessionId, quotes] of newer) taken.set(sessionId, new Map([...(taken.get(sessionId) ?? []), ...quotes]))
      return taken
    },
  )
  // Per live session, the last search found recorded as it stands: a partner repeating it is
  // answered without reading the file.
  const lastRecorded = new Map<number, string>()
  const signature = (quotes: Quote[]) => quotes.map((quote) => `${quote.planId} ${quote.source} ${quote.upstreamRef}`).join()

  function notRecorded(sessionId: number, quotes: Quote[]): Quote[] {
    const held = pending.held.get(sessionId)
    const notHeld = held
      ? unsavedQuotes(
          quotes,
          [...held.values()].map(({ planId, source, upstreamRef }) => ({ plan_id: planId, source, upstream_ref: upstreamRef })),
        )
      : quotes
    if (notHeld.length === 0) return []
    return unsavedQuotes(notHeld, recorded.all(sessionId, JSON.stringify(notHeld.map((quote) => quote.planId))))
  }

  return {
    unsaved(sessionId: number, quotes: Quote[]): Quote[] {
      const searched = signature(quotes)
      if (lastRecorded.get(sessionId) === searched) return []
      const unsaved = notRecorded(sessionId, quotes)
      if (unsaved.length === 0) lastRecorded.set(sessionId, searched)
      return unsaved
    },
    /** The sweep purged the session: nothing of it is remembered. */
    forget(sessionId: number): void {
      lastRecorded.delete(sessionId)
    },
    /** Records the quotes in memory; the next write puts them in the file. */
    record(sessionId: number, quotes: Quote[]): void {
      let held = pending.held.get(sessionId)
      if (!held) pending.held.set(sessionId, (held = new Map()))
      for (const quote of quotes) held.set(quote.planId, quote)
    },
    find<Plan>(sessionId: number, planId: string): Quote<Plan> | undefined {
      const held = pending.held.get(sessionId)?.get(planId)
      if (held) return held as Quote<Plan>
      const row = byPlanId.get(sessionId, planId)
      return row && quoteFromRow<Plan>(row)
    },
    /** The quotes recorded and not yet written. */
    unwritten: pending,
    write(taken: UnwrittenQuotes): void {
      for (const [sessionId, quotes] of taken) {
        for (const row of [...quotes.values()].map(quoteToRow)) {
          insert.run(sessionId, row.plan_id, row.trip, row.ages, row.currency, row.plan, row.source, row.upstream_ref, sessionId)
        }
      }
    },
  }
}

export type QuoteStore = ReturnType<typeof quoteStore>
