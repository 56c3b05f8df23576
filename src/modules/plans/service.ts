/**
 * @module Plan search: check the request, price it (through the insurer's UAT when a gateway is
 * configured and answering, else from the catalogue), record the quotes for issue.
 */
import { ApiError } from '../../errors'
import { businessNow } from '../../domain/session-clock'
import { todayDayNumber } from '../../domain/dates'
import { agesKey, checkTripRequest, type Trip } from '../../domain/trip'
import type { Source } from '../../storage/storage'
import type { Services } from '../services'
import { sessionEnded } from '../session/service'
import type { SearchRequest } from './model'
import { priceCatalogue, type PricedPlan } from './pricing'

export const DEFAULT_CURRENCY = 'INR'

type SourcedPlan = PricedPlan & { upstreamRef: string | null }

/** What plan search needs of the app's services. */
type Deps = Pick<Services, 'storage' | 'clock' | 'catalogue' | 'insurer' | 'log'>

export async function searchPlans(services: Deps, caller: { session: { id: number; clockOffsetMs: number }; requestId: string }, request: SearchRequest) {
  const { catalogue, storage } = services
  const sessionId = caller.session.id
  checkTripRequest(request, todayDayNumber(businessNow(services.clock(), caller.session)), new Set(Object.keys(catalogue.currencies)))
  const currency = request.currency ?? DEFAULT_CURRENCY
  const ages = agesKey(request.travellers)
  // A session whose clock moved is quoted by simulation: the insurer's clock cannot follow it.
  const { source, priced } = await pricePlans(services, { trip: request.trip, ages, currency }, caller.requestId, caller.session.clockOffsetMs > 0)
  const given = priced.map(({ product, plan, premiumMinor, upstreamRef }) => ({
    planId: plan.plan_id,
    product,
    trip: request.trip,
    ages,
    currency,
    plan,
    premiumMinor,
    source,
    upstreamRef,
  }))
  // A partner repeating a search changes nothing: reading that costs less than writing it again.
  const unsaved = await storage.quotes.unsaved(sessionId, given)
  if (unsaved.length > 0 && !(await storage.quotes.record(sessionId, unsaved, services.clock()))) throw sessionEnded()
  return { mode: source, data: { trip: request.trip, travellers: request.travellers.length, currency, plans: priced.map(({ plan }) => plan) } }
}

/** The insurer's plans when it answers; the catalogue's when there is no gateway or it is down. */
async function pricePlans(
  services: Deps,
  request: { trip: Trip; ages: number[]; currency: string },
  requestId: string,
  simulatedOnly: boolean,
): Promise<{ source: Source; priced: SourcedPlan[] }> {
  if (services.insurer && !simulatedOnly) {
    try {
      return { source: 'uat_gateway', priced: await services.insurer.search(request, requestId) }
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'upstream_unavailable')) throw error
      services.log({ level: 'warn', request_id: requestId, msg: 'insurer unavailable; search answered from simulation' })
    }
  }
  const priced = priceCatalogue(services.catalogue, request.trip, request.ages, request.currency)
  return { source: 'simulation', priced: priced.map((plan) => ({ ...plan, upstreamRef: null })) }
}
