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
    // One statement: the session is checked live and held against the sweep (FOR SHARE, as
    // `isLive` in a transaction) while the quotes are written, so a search needs no transaction.
    async record(sessionId, given, now) {
      const rows = JSON.stringify(given.map(quoteToRow))
      const [row] = await sql<{ live: boolean }[]>`
        WITH live AS (SELECT id FROM sessions WHERE id = ${sessionId} AND expires_at > ${now} AND NOT purged FOR SHARE),
        saved AS (
          INSERT INTO quotes (session_id, plan_id, trip, ages, currency, plan, source, upstream_ref)
          SELECT live.id, q.plan_id, q.trip, q.ages, q.currency, q.plan, q.source, q.upstream_ref
            FROM live, json_to_recordset(${rows}::text::json)
              AS q (plan_id text, trip text, ages text, currency text, plan text, source text, upstream_ref text)
          ON CONFLICT (session_id, plan_id) DO UPDATE SET plan = excluded.plan, source = excluded.source, upstream_ref = excluded.upstream_ref)
        SELECT EXISTS (SELECT 1 FROM live) AS live`
      return row!.live
    },
    async find(sessionId, planId) {
      const [row] = await sql<QuoteRow[]>`
        SELECT plan_id, trip, ages, currency, plan, source, upstream_ref FROM quotes WHERE session_id = ${sessionId} AND plan_id = ${planId}`
      return row && quoteFromRow(row)
    },
  }
}
