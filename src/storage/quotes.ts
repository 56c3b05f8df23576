/** @module Plans a search returned, recorded against the session for issue to check. */
import type { Trip } from '../domain/trip'
import type { SqliteDriver } from './driver'

export interface Quote<Plan = unknown> {
  planId: string
  product: string
  trip: Trip
  ages: number[]
  currency: string
  plan: Plan
}

export function quoteStore(db: SqliteDriver) {
  const insert = db.prepare(
    'INSERT OR IGNORE INTO quotes (session_id, plan_id, trip, ages, currency, plan) VALUES (?, ?, ?, ?, ?, ?)',
  )
  const byPlanId = db.prepare<{ trip: string; ages: string; currency: string; plan: string }>(
    'SELECT trip, ages, currency, plan FROM quotes WHERE session_id = ? AND plan_id = ?',
  )
  return {
    save(sessionId: number, quotes: Quote[]): void {
      for (const quote of quotes) {
        insert.run(sessionId, quote.planId, JSON.stringify(quote.trip), JSON.stringify(quote.ages), quote.currency,
          JSON.stringify({ product: quote.product, plan: quote.plan }))
      }
    },
    find<Plan>(sessionId: number, planId: string): Quote<Plan> | undefined {
      const row = byPlanId.get(sessionId, planId)
      if (!row) return undefined
      const { product, plan } = JSON.parse(row.plan) as { product: string; plan: Plan }
      return { planId, product, plan, trip: JSON.parse(row.trip), ages: JSON.parse(row.ages), currency: row.currency }
    },
  }
}

export type QuoteStore = ReturnType<typeof quoteStore>
