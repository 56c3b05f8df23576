/** @module Plan search: check the request, price the catalogue, record the quotes for issue. */
import { todayDayNumber } from '../../domain/dates'
import { agesKey, checkTripRequest } from '../../domain/trip'
import { immediate } from '../../storage/driver'
import type { Services } from '../../services'
import type { SearchRequest } from './model'
import { priceCatalogue } from './pricing'

export const DEFAULT_CURRENCY = 'INR'

export function searchPlans(services: Services, sessionId: number, request: SearchRequest) {
  const { catalogue, quotes, db } = services
  checkTripRequest(request, todayDayNumber(services.clock()), new Set(Object.keys(catalogue.currencies)))
  const currency = request.currency ?? DEFAULT_CURRENCY
  const ages = agesKey(request.travellers)
  const priced = priceCatalogue(catalogue, request.trip, ages, currency)
  immediate(db, () =>
    quotes.save(sessionId, priced.map(({ product, plan }) => ({ planId: plan.plan_id, product, trip: request.trip, ages, currency, plan }))),
  )
  return { trip: request.trip, travellers: request.travellers.length, currency, plans: priced.map(({ plan }) => plan) }
}
