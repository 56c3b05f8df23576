/** @module Plans a search returned, recorded against the session for issue to check. */
import { quoteFromRow, quoteToRow, unsavedQuotes, type QuoteRow } from '../rows'
import type { QuoteStore } from '../storage'
import type { Queryable } from './driver'

export function quoteStore(sql: Queryable): QuoteStore {
  return {
    async unsaved(sessionId, given) {
      if (given.length === 0) return []
      const rows = await sql<Pick<QuoteRow, 'plan_id' | 'source' | 'upstream_ref'>[]>`
        SELECT plan_id, source, upstream_ref FROM quotes
        WHERE session_id = ${sessionId} AND plan_id = ANY(${given.map((quote) => quote.planId)}::text[])`
      return unsavedQuotes(given, rows)
    },
    async save(sessionId, given) {
      const rows = given.map((quote) => ({ session_id: sessionId, ...quoteToRow(quote) }))
      await sql`
        INSERT INTO quotes ${sql(rows)}
        ON CONFLICT (session_id, plan_id) DO UPDATE SET plan = excluded.plan, source = excluded.source, upstream_ref = excluded.upstream_ref`
    },
    async find(sessionId, planId) {
      const [row] = await sql<QuoteRow[]>`
        SELECT plan_id, trip, ages, currency, plan, source, upstream_ref FROM quotes WHERE session_id = ${sessionId} AND plan_id = ${planId}`
      return row && quoteFromRow(row)
    },
  }
}
