/** @module Plans a search returned, recorded against the session for issue to check. */
import { quoteFromRow, quoteToRow, unsavedQuotes, type QuoteRow } from '../rows'
import type { Quote } from '../storage'
import type { SqliteConnection } from '../drivers/connection'

export function quoteStore(db: SqliteConnection) {
  const insert = db.prepare(
    // A plan_id is a digest of everything that priced it, so a repeated search changes at most
    // where the plan came from: only then is the row written again.
    `INSERT INTO quotes (session_id, plan_id, trip, ages, currency, plan, source, upstream_ref)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (session_id, plan_id) DO UPDATE SET plan = excluded.plan, source = excluded.source, upstream_ref = excluded.upstream_ref
     WHERE source IS NOT excluded.source OR upstream_ref IS NOT excluded.upstream_ref`,
  )
  const recorded = db.prepare<Pick<QuoteRow, 'plan_id' | 'source' | 'upstream_ref'>>(
    'SELECT plan_id, source, upstream_ref FROM quotes WHERE session_id = ? AND plan_id IN (SELECT value FROM json_each(?))',
  )
  const byPlanId = db.prepare<QuoteRow>(
    'SELECT plan_id, trip, ages, currency, plan, source, upstream_ref FROM quotes WHERE session_id = ? AND plan_id = ?',
  )
  return {
    unsaved(sessionId: number, quotes: Quote[]): Quote[] {
      return unsavedQuotes(quotes, recorded.all(sessionId, JSON.stringify(quotes.map((quote) => quote.planId))))
    },
    save(sessionId: number, quotes: Quote[]): void {
      for (const row of quotes.map(quoteToRow)) {
        insert.run(sessionId, row.plan_id, row.trip, row.ages, row.currency, row.plan, row.source, row.upstream_ref)
      }
    },
    find<Plan>(sessionId: number, planId: string): Quote<Plan> | undefined {
      const row = byPlanId.get(sessionId, planId)
      return row && quoteFromRow<Plan>(row)
    },
  }
}
