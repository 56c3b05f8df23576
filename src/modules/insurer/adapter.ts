/**
 * @module The insurer adapter seam and its one implementation: the generic insurer UAT protocol
 * over HTTP/JSON. Answers are normalised to our catalogue: insurer product codes map to our
 * products (data/insurer-products.json), and names, tiers, cover types and benefits come from our
 * catalogue only, so no insurer label, code or reference can reach a partner.
 */
import { randomUUID } from 'node:crypto'
import { Value } from '@sinclair/typebox/value'
import { ApiError } from '../../errors'
import type { UatConfig } from '../../config'
import type { Trip } from '../../domain/trip'
import mapping from '../../../data/insurer-products.json'
import type { Catalogue } from '../plans/catalogue'
import { byPremiumThenId, planId, toAmount, type PricedPlan } from '../plans/pricing'
import { FIELD_OF, type Scenario } from '../../domain/scenarios'
import type { BreakerState } from './breaker'
import { InsurerFault, insurerClient, type ClientDeps, type InsurerCall } from './client'
import { CHANGE_OF, CancellationAnswer, EndorsementAnswer, PolicyAnswer, QuotesAnswer, journey } from './protocol'

export interface InsurerQuote extends PricedPlan {
  /** The insurer's quote reference: stored, never shown. */
  upstreamRef: string
}

export interface InsurerAdapter {
  search(request: { trip: Trip; ages: number[]; currency: string }, requestId: string): Promise<InsurerQuote[]>
  issue(request: { quoteRef: string; trip: Trip; ages: number[]; currency: string }, call: InsurerCall): Promise<{ upstreamRef: string; premiumMinor: number }>
  /** `dryRun`: priced by the insurer, not applied. */
  endorse(request: { upstreamRef: string; scenario: Scenario; value: string; dryRun: boolean }, call: InsurerCall): Promise<{ premiumMinor: number }>
  /** `dryRun`: the refund the insurer would give now, nothing cancelled. */
  cancel(request: { upstreamRef: string; dryRun: boolean }, call: InsurerCall): Promise<{ refundMinor: number }>
  breakerState(): BreakerState
}

const PRODUCTS: Record<string, string | undefined> = mapping.products
const COVERS: Record<string, string | undefined> = mapping.cover_codes

/**
 * Insurer refusals that mean something to a partner, as the contract error for the request's
 * `field`; any other refusal is the insurer's problem.
 */
const FAULTS: Record<string, (field: string) => ApiError> = {
  NOT_COVERED: (field) => new ApiError('scenario_not_applicable', { variant: 'notCovered', details: [{ field, issue: 'is outside the cover of this plan' }] }),
  QUOTE_NOT_FOUND: (field) => new ApiError('plan_not_found', { variant: 'unknownToInsurer', details: [{ field, issue: 'is no longer known to the insurer' }] }),
  POLICY_NOT_FOUND: () => new ApiError('policy_not_found'),
  DECLINED: () => new ApiError('insurer_declined'),
  POLICY_CANCELLED: () => new ApiError('policy_cancelled'),
}

export function httpInsurer(config: UatConfig, catalogue: Catalogue, deps: ClientDeps): InsurerAdapter {
  const client = insurerClient(config, deps)

  /**
   * Posts and checks the answer's shape. `field` is the request field an insurer refusal is about
   * (issue, endorse): known refusals become contract errors there; a search has none.
   */
  async function call<T>(path: string, body: unknown, schema: Parameters<typeof Value.Check>[0], meta: InsurerCall, field?: string): Promise<T> {
    let answer: unknown
    try {
      answer = await client.post(path, body, meta)
    } catch (error) {
      if (!(error instanceof InsurerFault)) throw error
      const known = error.faultCode ? FAULTS[error.faultCode] : undefined
      if (field && known) throw known(field)
      throw client.invalid(meta, `refused with HTTP ${error.status}`)
    }
    if (!Value.Check(schema, answer)) throw client.invalid(meta, `answer does not follow the protocol at ${[...Value.Errors(schema, answer)][0]?.path}`)
    return answer as T
  }

  function normalise(
    quote: (typeof QuotesAnswer.static)['quotes'][number],
    request: { trip: Trip; ages: number[]; currency: string },
    meta: InsurerCall,
  ): InsurerQuote {
    const product = PRODUCTS[quote.product_code]
    const definition = catalogue.plans.find((plan) => plan.product === product)
    if (!product || !definition) throw client.invalid(meta, 'unknown product code')
    if (COVERS[quote.cover_code] !== definition.cover_type) throw client.invalid(meta, 'unknown cover code')
    if (quote.currency !== request.currency || !catalogue.currencies[quote.currency]) throw client.invalid(meta, 'currency differs from the request')
    const amount = (minor: number) => toAmount(catalogue, minor, request.currency)
    return {
      product,
      premiumMinor: quote.premium_minor,
      upstreamRef: quote.quote_ref,
      plan: {
        plan_id: planId(product, request.trip, request.ages, request.currency),
        name: definition.name,
        tier: definition.tier,
        currency: request.currency,
        sum_insured: amount(quote.sum_insured_minor),
        premium: amount(quote.premium_minor),
        cover_type: definition.cover_type,
        benefits_summary: definition.benefits_summary,
      },
    }
  }

  return {
    breakerState: () => client.breaker.state(),

    async search(request, requestId) {
      const meta = { requestId, idempotencyKey: randomUUID() }
      const answer = await call<typeof QuotesAnswer.static>(
        '/v1/quotes',
        { ...journey(request.trip, request.ages), currency: request.currency },
        QuotesAnswer,
        meta,
      )
      const plans = answer.quotes.map((quote) => normalise(quote, request, meta))
      if (new Set(plans.map((plan) => plan.product)).size < plans.length) throw client.invalid(meta, 'two quotes for one product')
      return plans.sort(byPremiumThenId)
    },

    async issue(request, meta) {
      const answer = await call<typeof PolicyAnswer.static>(
        '/v1/policies',
        { quote_ref: request.quoteRef, ...journey(request.trip, request.ages) },
        PolicyAnswer,
        meta,
        'plan_id',
      )
      if (answer.currency !== request.currency) throw client.invalid(meta, 'policy bound in another currency')
      return { upstreamRef: answer.policy_number, premiumMinor: answer.premium_minor }
    },

    async endorse(request, meta) {
      const path = `/v1/policies/${encodeURIComponent(request.upstreamRef)}/endorsements`
      const body = { change: CHANGE_OF[request.scenario], value: request.value, dry_run: request.dryRun }
      const answer = await call<typeof EndorsementAnswer.static>(path, body, EndorsementAnswer, meta, FIELD_OF[request.scenario])
      return { premiumMinor: answer.premium_minor }
    },

    async cancel(request, meta) {
      const path = `/v1/policies/${encodeURIComponent(request.upstreamRef)}/cancellations`
      const answer = await call<typeof CancellationAnswer.static>(path, { dry_run: request.dryRun }, CancellationAnswer, meta, 'policy_ref')
      return { refundMinor: answer.refund_minor }
    },
  }
}
