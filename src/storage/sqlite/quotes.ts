/** @module Plans a search returned, recorded against the session for issue to check. */
import type { Quote, Source } from '../storage'
import type { SqliteDriver } from './driver'

export function quoteStore(db: SqliteDriver) {
  const insert = db.prepare(
    // A plan_id is a digest of everything that priced it, so a repeated search changes at most
    // where the plan came from: only then is the row written again.
    `INSERT INTO quotes (session_id, plan_id, trip, ages, currency, plan, source, upstream_ref)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (session_id, plan_id) DO UPDATE SET plan = excluded.plan, source = excluded.source, upstream_ref = excluded.upstream_ref
     WHERE source IS NOT excluded.source OR upstream_ref IS NOT excluded.upstream_ref`,
  )
  const recorded = db.prepare<{ plan_id: string; source: Source; upstream_ref: string | null }>(
    'SELECT plan_id, source, upstream_ref FROM quotes WHERE session_id = ? AND plan_id IN (SELECT value FROM json_each(?))',
  )
  const byPlanId = db.prepare<{ trip: string; ages: string; currency: string; plan: string; source: Source; upstream_ref: string | null }>(
    'SELECT trip, ages, currency, plan, source, upstream_ref FROM quotes WHERE session_id = ? AND plan_id = ?',
  )
  return {
    /** The quotes this session has not been given yet, or not from the same source: what `save` would change. */
    unsaved(sessionId: number, quotes: Quote[]): Quote[] {
      const rows = recorded.all(sessionId, JSON.stringify(quotes.map((quote) => quote.planId)))
      const saved = new Map(rows.map((row) => [row.plan_id, row]))
      return quotes.filter((quote) => {
        const row = saved.get(quote.planId)
        return row?.source !== quote.source || row.upstream_ref !== quote.upstreamRef
      })
    },
    save(sessionId: number, quotes: Quote[]): void {
      for (const quote of quotes) {
        insert.run(sessionId, quote.planId, JSON.stringify(quote.trip), JSON.stringify(quote.ages), quote.currency,
          JSON.stringify({ product: quote.product, plan: quote.plan, premiumMinor: quote.premiumMinor }), quote.source, quote.upstreamRef)
      }
    },
    find<Plan>(sessionId: number, planId: string): Quote<Plan> | undefined {
      const row = byPlanId.get(sessionId, planId)
      if (!row) return undefined
      const { product, plan, premiumMinor } = JSON.parse(row.plan) as { product: string; plan: Plan; premiumMinor: number }
      return {
        planId, product, plan, premiumMinor, trip: JSON.parse(row.trip), ages: JSON.parse(row.ages), currency: row.currency,
        source: row.source, upstreamRef: row.upstream_ref,
      }
    },
  }
}
