/**
 * @module Policy issue: a policy from a plan a search in this session returned, bound by the
 * simulation catalogue or, for a UAT plan, by the insurer through the gateway.
 */
import { ApiError, type ErrorDetail } from '../../errors'
import { todayDayNumber } from '../../domain/dates'
import { newId } from '../../domain/ids'
import { businessNow } from '../../domain/session-clock'
import { coverageDueAt, recordCoverage } from './coverage'
import { agesKey, checkTripRequest, type Trip } from '../../domain/trip'
import type { PolicyRecord, Quote } from '../../storage/storage'
import { toAmount, type Plan } from '../plans/pricing'
import { checkedKey, commitOnce, earlierAnswer, fingerprint, upstreamKey } from './idempotency'
import type { IssueRequest } from './model'
import { issuedPayload, policyView } from './read'
import { insurerOf, recordEvent, refuseEndedSession, type Answer, type Caller, type Deps } from './operation'

/** How long a certificate stays `pending` after an issue with `Sandbox-Outcome: document_pending`. */
export const DOCUMENT_DELAY_MS = 5_000
/** The premium at bind with `Sandbox-Outcome: price_changed`: 5% more than quoted. */
const REPRICING = 1.05

export async function issuePolicy(services: Deps, caller: Caller, request: IssueRequest) {
  const { session } = caller
  checkTripRequest(request, todayDayNumber(businessNow(services.clock(), session)), new Set(Object.keys(services.catalogue.currencies)))
  const key = checkedKey(caller.idempotencyKey, caller.sessionToken)
  const print = fingerprint(key, 'issue', request)
  const earlier = await earlierAnswer<Answer<ReturnType<typeof issuedPayload>>>(services.storage, session.id, key, print)
  if (earlier) return earlier
  const quote = await matchingQuote(services, session.id, request)
  if (quote.source === 'uat_gateway' && session.clockOffsetMs > 0) throw new ApiError('clock_not_movable', { variant: 'insurerPlan' })
  const repriced = forcedPremium(services, caller, quote, request)
  const upstream = quote.source === 'uat_gateway' ? await issueUpstream(services, caller, quote, request, key) : null
  const wallNow = services.clock()
  const now = businessNow(wallNow, session)
  return commitOnce(services.storage, { id: session.id, now: wallNow }, key, print, async (stores) => {
    const premiumMinor = repriced ?? upstream?.premiumMinor ?? quote.premiumMinor
    const policy = await stores.policies.insert(newPolicy(caller, quote, request, premiumMinor, upstream?.upstreamRef ?? null, now))
    // A new policy has no endorsement yet: its first one makes it `endorsed`. Its two events are
    // written together (on PostgreSQL, pipelined: one round trip), in this order; then, for a trip
    // that starts today, `policy.started`.
    await Promise.all([
      recordEvent(stores, session, 'policy.issued', policyView(services, policy, [], now), now),
      recordEvent(stores, session, 'document.ready', policyView(services, policy, [], policy.documentReadyAt), policy.documentReadyAt),
    ])
    if (policy.coverageDueAt !== null && policy.coverageDueAt <= wallNow) await recordCoverage(services, stores, session, [policy], now)
    return { mode: policy.source, data: issuedPayload(services, policy, now) }
  })
}

/**
 * The premium a forced price change sets at bind (undefined without one), once the caller accepts it.
 * A forced decline or price change stands in for the insurer's answer at bind: a refusal calls no insurer.
 */
function forcedPremium(services: Deps, caller: Caller, quote: Quote<Plan>, request: IssueRequest): number | undefined {
  if (caller.outcome === 'insurer_declined') throw new ApiError('insurer_declined', { forced: true })
  const repriced = caller.outcome === 'price_changed' ? Math.round(quote.premiumMinor * REPRICING) : undefined
  if (repriced !== undefined || request.expected_premium !== undefined) {
    checkExpectedPremium(services, request.expected_premium, repriced ?? quote.premiumMinor, quote.currency)
  }
  return repriced
}

/** Binds a UAT plan's quote at the insurer. */
async function issueUpstream(services: Deps, caller: Caller, quote: Quote<Plan>, request: IssueRequest, key: string | undefined) {
  return insurerOf(services).issue(
    { quoteRef: quote.upstreamRef!, trip: request.trip, ages: quote.ages, currency: quote.currency },
    { requestId: caller.requestId, idempotencyKey: upstreamKey(caller.session.ref, key, 'issue') },
  )
}

/** The policy a bound quote becomes, with references of its own; its certificate later with a forced `document_pending`. */
function newPolicy(
  caller: Caller,
  quote: Quote<Plan>,
  request: IssueRequest,
  premiumMinor: number,
  upstreamRef: string | null,
  now: number,
): Omit<PolicyRecord, 'id'> {
  const policy: Omit<PolicyRecord, 'id'> = {
    sessionId: caller.session.id,
    ref: `pol_sbx_${newId()}`,
    svcInsuranceId: `svc_sbx_${newId()}`,
    planId: quote.planId,
    product: quote.product,
    status: 'issued',
    trip: request.trip,
    travellers: request.travellers.map(({ age }) => ({ traveller_ref: `trv_sbx_${newId()}`, age })),
    partnerReference: request.partner_reference ?? null,
    currency: quote.currency,
    premiumMinor,
    createdAt: now,
    updatedAt: now,
    source: quote.source,
    upstreamRef,
    documentReadyAt: caller.outcome === 'document_pending' ? now + DOCUMENT_DELAY_MS : now,
    cancellation: null,
    documentVersion: 1,
    coverageRecorded: 0,
    coverageDueAt: null,
  }
  return { ...policy, coverageDueAt: coverageDueAt(policy, caller.session) }
}

/**
 * `price_changed` unless the caller accepts the premium at bind (`expected_premium`, compared in the
 * currency's minor unit); the answer carries the premium at bind.
 */
function checkExpectedPremium(services: Deps, expected: number | undefined, premiumMinor: number, currency: string): void {
  const minorUnit = services.catalogue.currencies[currency]!.minor_unit
  // Equal to the minor unit, not merely rounding to it: 19.186 does not accept 19.19.
  if (expected !== undefined && Math.abs(expected * 10 ** minorUnit - premiumMinor) < 1e-6) return
  const amount = toAmount(services.catalogue, premiumMinor, currency).toFixed(minorUnit)
  throw new ApiError('price_changed', {
    values: { amount, currency },
    details: [{ field: 'expected_premium', issue: `must be ${amount}, the premium at bind, to accept it` }],
  })
}

/**
 * The quote a search in this session returned for `plan_id`, with the same trip and ages.
 */
async function matchingQuote(services: Deps, sessionId: number, request: IssueRequest): Promise<Quote<Plan>> {
  const quote = await services.storage.quotes.find<Plan>(sessionId, request.plan_id)
  if (!quote) {
    await refuseEndedSession(services, sessionId)
    throw new ApiError('plan_not_found', {
      variant: 'notSearched',
      details: [{ field: 'plan_id', issue: 'was not returned by a plan search in this session' }],
    })
  }
  const mismatches = tripDifferences(quote.trip, request.trip)
  if (quote.ages.join() !== agesKey(request.travellers).join())
    mismatches.push({ field: 'travellers', issue: 'ages differ from the search that returned this plan' })
  if (mismatches.length > 0) {
    throw new ApiError('plan_mismatch', { details: mismatches })
  }
  return quote
}

function tripDifferences(searched: Trip, issued: Trip): ErrorDetail[] {
  return (Object.keys(searched) as (keyof Trip)[])
    .filter((field) => searched[field] !== issued[field])
    .map((field) => ({ field: `trip.${field}`, issue: 'differs from the search that returned this plan' }))
}
