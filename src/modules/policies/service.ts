/**
 * @module Policy issue, modification and cancellation. A policy goes back to what produced its plan:
 * the simulation catalogue, or the insurer's UAT through the gateway.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { ApiError, FAILURE_MESSAGE, type ErrorDetail } from '../../errors'
import { isoTimestamp, todayDayNumber } from '../../domain/dates'
import { FORCED, type BusinessOutcome } from '../../http/forced-outcome'
import { agesKey, checkTripRequest, type Trip } from '../../domain/trip'
import type { EndorsementRecord, PolicyRecord, Quote, Source, Stores } from '../../storage/storage'
import type { Services } from '../services'
import type { InsurerAdapter } from '../insurer/adapter'
import { premiumInPaise, toAmount, toMinorUnits, type Plan } from '../plans/pricing'
import { sessionEnded } from '../session/service'
import { checkedKey, commitOnce, earlierAnswer, fingerprint, upstreamKey } from './idempotency'
import type { CancelRequest, IssueRequest, ModifyRequest } from './model'
import { refundOf } from './refund'
import { findPolicy, issuedPayload, policyEventData, policyView, refundView, type PolicyView } from './read'
import { newEvent, type EventType } from '../../domain/events'
import { applyScenario, checkScenarioFields, type Correction } from './scenarios'

/** How long a certificate stays `pending` after an issue with `Sandbox-Outcome: document_pending`. */
export const DOCUMENT_DELAY_MS = 5_000
/** The premium at bind with `Sandbox-Outcome: price_changed`: 5% more than quoted. */
const REPRICING = 1.05

const hexId = () => randomBytes(10).toString('hex')

/** An operation's answer and what produced it (the envelope's `mode`). */
export interface Answer<T> {
  mode: Source
  data: T
}

export interface Caller {
  session: { id: number; ref: string }
  /** The session's cookie token: the key of the Idempotency-Key's hash. */
  sessionToken: string
  requestId: string
  /** The `Idempotency-Key` header as sent (checked here, after the body), or null. */
  idempotencyKey: string | null
  /** A business outcome asked for with `Sandbox-Outcome` (issue only), or null. */
  outcome: BusinessOutcome | null
}

/** What issue, modify and cancel need of the app's services. */
type Deps = Pick<Services, 'storage' | 'clock' | 'catalogue' | 'insurer'>

/** The insurer for a UAT-sourced plan or policy; without a gateway it cannot be reached. */
function insurerOf(services: Deps): InsurerAdapter {
  if (!services.insurer) throw new ApiError('upstream_unavailable', 'This plan or policy came from the test insurer, and no gateway is configured.', undefined, 60)
  return services.insurer
}

export async function issuePolicy(services: Deps, caller: Caller, request: IssueRequest) {
  checkTripRequest(request, todayDayNumber(services.clock()), new Set(Object.keys(services.catalogue.currencies)))
  const { session } = caller
  const key = checkedKey(caller.idempotencyKey, caller.sessionToken)
  const print = fingerprint(key, 'issue', request)
  const earlier = await earlierAnswer<Answer<ReturnType<typeof issuedPayload>>>(services.storage, session.id, key, print)
  if (earlier) return earlier
  const quote = await matchingQuote(services, session.id, request)
  // A forced decline or price change stands in for the insurer's answer at bind: a refusal calls no insurer.
  if (caller.outcome === 'insurer_declined') throw new ApiError('insurer_declined', `${FAILURE_MESSAGE.insurer_declined}${FORCED}`)
  const repriced = caller.outcome === 'price_changed' ? Math.round(quote.premiumMinor * REPRICING) : undefined
  if (repriced !== undefined || request.expected_premium !== undefined) {
    checkExpectedPremium(services, request.expected_premium, repriced ?? quote.premiumMinor, quote.currency)
  }
  const upstream = quote.source === 'uat_gateway'
    ? await insurerOf(services).issue(
      { quoteRef: quote.upstreamRef!, trip: request.trip, ages: quote.ages, currency: quote.currency },
      { requestId: caller.requestId, idempotencyKey: upstreamKey(session.ref, key, 'issue') },
    )
    : null
  const now = services.clock()
  return commitOnce(services.storage, { id: session.id, now }, key, print, async (stores) => {
    const policy = await stores.policies.insert({
      sessionId: session.id,
      ref: `pol_sbx_${hexId()}`,
      svcInsuranceId: `svc_sbx_${hexId()}`,
      planId: quote.planId,
      product: quote.product,
      status: 'issued',
      trip: request.trip,
      travellers: request.travellers.map(({ age }) => ({ traveller_ref: `trv_sbx_${hexId()}`, age })),
      partnerReference: request.partner_reference ?? null,
      currency: quote.currency,
      premiumMinor: repriced ?? upstream?.premiumMinor ?? quote.premiumMinor,
      createdAt: now,
      updatedAt: now,
      source: quote.source,
      upstreamRef: upstream?.upstreamRef ?? null,
      documentReadyAt: caller.outcome === 'document_pending' ? now + DOCUMENT_DELAY_MS : now,
      cancellation: null,
    })
    // A new policy has no endorsement yet: its first one makes it `endorsed`. Its two events are
    // written together (on PostgreSQL, pipelined: one round trip), in this order.
    await Promise.all([
      recordEvent(stores, session, 'policy.issued', policyView(services, policy, [], now), now),
      recordEvent(stores, session, 'document.ready', policyView(services, policy, [], policy.documentReadyAt), policy.documentReadyAt),
    ])
    return { mode: policy.source, data: issuedPayload(services, policy, now) }
  })
}

/** The event of a change at `at`, with the policy as read-back shows it then (less its history): written in the change's transaction. */
async function recordEvent(stores: Stores, session: Caller['session'], type: EventType, view: PolicyView, at: number) {
  await stores.events.append(newEvent(session, type, policyEventData(view, type), at))
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
  throw new ApiError('price_changed', `The premium at bind is ${amount} ${currency}, not the one expected; nothing was issued. `
    + `Issue again with "expected_premium": ${amount} to accept it.`, [
    { field: 'expected_premium', issue: `must be ${amount}, the premium at bind, to accept it` },
  ])
}

/**
 * `session_expired` when the session ended after its request was admitted: its references are gone
 * then, and "not found" would mislead. Called before answering that something was not found.
 */
async function refuseEndedSession(services: Deps, sessionId: number): Promise<void> {
  if (!(await services.storage.sessions.isLive(sessionId, services.clock()))) throw sessionEnded()
}

/**
 * The quote a search in this session returned for `plan_id`, with the same trip and ages.
 */
async function matchingQuote(services: Deps, sessionId: number, request: IssueRequest): Promise<Quote<Plan>> {
  const quote = await services.storage.quotes.find<Plan>(sessionId, request.plan_id)
  if (!quote) {
    await refuseEndedSession(services, sessionId)
    throw new ApiError('plan_not_found', 'No plan search in this session returned this plan_id.', [
      { field: 'plan_id', issue: 'was not returned by a plan search in this session' },
    ])
  }
  const mismatches = tripDifferences(quote.trip, request.trip)
  if (quote.ages.join() !== agesKey(request.travellers).join()) mismatches.push({ field: 'travellers', issue: 'ages differ from the search that returned this plan' })
  if (mismatches.length > 0) {
    throw new ApiError('plan_mismatch', 'The trip or traveller ages differ from the search that returned this plan_id.', mismatches)
  }
  return quote
}

function tripDifferences(searched: Trip, issued: Trip): ErrorDetail[] {
  return (Object.keys(searched) as (keyof Trip)[])
    .filter((field) => searched[field] !== issued[field])
    .map((field) => ({ field: `trip.${field}`, issue: 'differs from the search that returned this plan' }))
}

export async function modifyPolicy(services: Deps, caller: Caller, ref: string, request: ModifyRequest) {
  checkScenarioFields(request)
  const { session } = caller
  const key = checkedKey(caller.idempotencyKey, caller.sessionToken)
  if (request.preview) return previewModify(services, caller, ref, request)
  const print = fingerprint(key, `modify ${ref}`, request)
  const earlier = await earlierAnswer<Answer<ReturnType<typeof corrected>['answer']>>(services.storage, session.id, key, print)
  if (earlier) return earlier
  const policy = await livePolicy(services, session.id, ref)
  if (policy.status === 'cancelled') return replayOrRefuse<Answer<ReturnType<typeof corrected>['answer']>>(services, session.id, key, print)
  const upstream = policy.source === 'uat_gateway' ? await endorseUpstream(services, caller, policy, request, key, print) : null
  const now = services.clock()
  // The scenario is applied to the policy as it is now, in the transaction that writes it.
  return commitOnce(services.storage, { id: session.id, now }, key, print, async (stores) => {
    const current = refuseCancelled(await findPolicy(stores.policies, session.id, ref))
    const { updated, endorsement, history, answer } = corrected(services, current, await stores.policies.endorsements(current.id), request, now, upstream?.premiumMinor)
    // The correction and its event are written together (on PostgreSQL, pipelined: one round trip).
    await Promise.all([
      stores.policies.endorse(updated, endorsement, history.length),
      recordEvent(stores, session, 'policy.endorsed', policyView(services, updated, history, now), now),
    ])
    return { mode: current.source, data: answer }
  })
}

/**
 * What the correction would answer, priced as the real one is (by the insurer for a UAT policy,
 * asked not to apply it), with nothing written: a preview needs no Idempotency-Key.
 */
async function previewModify(services: Deps, caller: Caller, ref: string, request: ModifyRequest) {
  const policy = refuseCancelled(await livePolicy(services, caller.session.id, ref))
  const correction = applyScenario(policy, request)
  const premiumMinor = policy.source === 'uat_gateway'
    ? (await insurerOf(services).endorse(upstreamCorrection(policy, request, correction, true), { requestId: caller.requestId, idempotencyKey: randomUUID() })).premiumMinor
    : simulatedPremium(services, policy, correction.trip)
  const data = { preview: true as const, ...correctionPayload(services, policy, correction, premiumMinor) }
  return { data: { mode: policy.source, data }, replayed: false }
}

/** The session's policy with this ref; `session_expired` when the session ended while the request waited. */
async function livePolicy(services: Deps, sessionId: number, ref: string): Promise<PolicyRecord> {
  return findPolicy(services.storage.policies, sessionId, ref).catch(async (error) => {
    await refuseEndedSession(services, sessionId)
    throw error
  })
}

/**
 * A cancelled policy takes no change, unless this request repeats one whose first answer was
 * committed since it last looked (another process, a cancel racing its own repeat): that replays.
 */
async function replayOrRefuse<T>(services: Deps, sessionId: number, key: string | undefined, print: string) {
  const first = await earlierAnswer<T>(services.storage, sessionId, key, print)
  if (first) return first
  throw cancelled()
}

const cancelled = () => new ApiError('policy_cancelled', FAILURE_MESSAGE.policy_cancelled)

function refuseCancelled(policy: PolicyRecord): PolicyRecord {
  if (policy.status === 'cancelled') throw cancelled()
  return policy
}

/**
 * Asks the insurer to endorse the correction, once it is known to apply. A repeat whose first answer
 * was committed meanwhile (another process) finds the policy already corrected: it replays instead.
 */
async function endorseUpstream(services: Deps, caller: Caller, policy: PolicyRecord, request: ModifyRequest, key: string | undefined, print: string) {
  let correction: Correction
  try {
    correction = applyScenario(policy, request)
  } catch (error) {
    if (await earlierAnswer(services.storage, caller.session.id, key, print)) return null
    throw error
  }
  return insurerOf(services).endorse(
    upstreamCorrection(policy, request, correction, false),
    { requestId: caller.requestId, idempotencyKey: upstreamKey(caller.session.ref, key, `modify ${policy.ref}`) },
  )
}

/** A correction of a UAT policy in the insurer's terms; `dryRun`: priced, not applied. */
function upstreamCorrection(policy: PolicyRecord, request: ModifyRequest, correction: Correction, dryRun: boolean) {
  return { upstreamRef: policy.upstreamRef!, scenario: request.scenario, value: Object.values(correction.changes)[0]!.to, dryRun }
}

/** The premium of a simulated policy after a correction, or `scenario_not_applicable`. */
function simulatedPremium(services: Deps, policy: PolicyRecord, trip: Trip): number {
  const definition = services.catalogue.plans.find((plan) => plan.product === policy.product)!
  const paise = premiumInPaise(services.catalogue, definition, trip, agesKey(policy.travellers))
  if (paise === null) {
    throw new ApiError('scenario_not_applicable', 'The plan does not cover the corrected trip.', [
      { field: 'destination_country', issue: 'is outside the cover of this plan' },
    ])
  }
  return toMinorUnits(services.catalogue, paise, policy.currency)
}

/** What a modify answers of a correction to `policy`: the changed field, the new premium and the change. */
function correctionPayload(services: Deps, policy: PolicyRecord, correction: Correction, premiumMinor: number) {
  const [field] = Object.keys(correction.changes) as [string]
  const amount = (minor: number) => toAmount(services.catalogue, minor, policy.currency)
  return {
    policy_ref: policy.ref,
    status: 'endorsed' as const,
    ...(field === 'partner_reference' ? { partner_reference: correction.partnerReference! } : { trip: { [field]: correction.changes[field]!.to } }),
    premium: amount(premiumMinor),
    premium_change: amount(premiumMinor - policy.premiumMinor),
    currency: policy.currency,
  }
}

/**
 * The correction of `policy` (held by the caller's transaction) and its endorsement, written by the
 * caller: `earlier`, the history read once, numbers it (no gap: the position is the sequence).
 */
function corrected(services: Deps, policy: PolicyRecord, earlier: EndorsementRecord[], request: ModifyRequest, now: number, upstreamPremiumMinor: number | undefined) {
  const correction = applyScenario(policy, request)
  const premiumMinor = upstreamPremiumMinor ?? simulatedPremium(services, policy, correction.trip)
  const premiumChangeMinor = premiumMinor - policy.premiumMinor
  const updated: PolicyRecord = { ...policy, ...correction, status: 'endorsed', premiumMinor, updatedAt: now }
  const endorsement: EndorsementRecord = { scenario: request.scenario, changes: correction.changes, premiumChangeMinor, createdAt: now }
  const history = [...earlier, endorsement]
  const answer = {
    ...correctionPayload(services, policy, correction, premiumMinor),
    endorsement: { sequence: history.length, scenario: request.scenario, created_at: isoTimestamp(now) },
  }
  return { updated, endorsement, history, answer }
}

/**
 * Cancels a policy with its refund, or with `preview` answers that refund and changes nothing.
 * The refund follows from the policy's trip and premium and the day (policies/refund.ts); a UAT
 * policy is cancelled, or its refund asked for, at the insurer.
 */
export async function cancelPolicy(services: Deps, caller: Caller, ref: string, request: CancelRequest) {
  const { session } = caller
  const key = checkedKey(caller.idempotencyKey, caller.sessionToken)
  if (request.preview) return previewCancel(services, caller, ref)
  // A real cancel's body says nothing more: `{}`, an empty body and `{"preview": false}` are one request.
  const print = fingerprint(key, `cancel ${ref}`, {})
  const earlier = await earlierAnswer<Answer<ReturnType<typeof cancellationPayload>>>(services.storage, session.id, key, print)
  if (earlier) return earlier
  const policy = await livePolicy(services, session.id, ref)
  if (policy.status === 'cancelled') return replayOrRefuse<Answer<ReturnType<typeof cancellationPayload>>>(services, session.id, key, print)
  const upstream = policy.source === 'uat_gateway'
    ? await insurerOf(services).cancel({ upstreamRef: policy.upstreamRef!, dryRun: false }, { requestId: caller.requestId, idempotencyKey: upstreamKey(session.ref, key, `cancel ${ref}`) })
    : null
  const now = services.clock()
  return commitOnce(services.storage, { id: session.id, now }, key, print, async (stores) => {
    const current = refuseCancelled(await findPolicy(stores.policies, session.id, ref))
    const refundMinor = upstream?.refundMinor ?? refundOf(current.trip, current.premiumMinor, todayDayNumber(now)).refundMinor
    const cancelled: PolicyRecord = { ...current, status: 'cancelled', cancellation: { at: now, refundMinor }, updatedAt: now }
    const history = current.status === 'issued' ? [] : await stores.policies.endorsements(current.id)
    // The cancellation and its event are written together (on PostgreSQL, pipelined: one round trip).
    await Promise.all([
      stores.policies.cancel(cancelled),
      recordEvent(stores, session, 'policy.cancelled', policyView(services, cancelled, history, now), now),
    ])
    return { mode: current.source, data: cancellationPayload(services, cancelled) }
  })
}

async function previewCancel(services: Deps, caller: Caller, ref: string) {
  const policy = refuseCancelled(await livePolicy(services, caller.session.id, ref))
  const now = services.clock()
  const refundMinor = policy.source === 'uat_gateway'
    ? (await insurerOf(services).cancel({ upstreamRef: policy.upstreamRef!, dryRun: true }, { requestId: caller.requestId, idempotencyKey: randomUUID() })).refundMinor
    : refundOf(policy.trip, policy.premiumMinor, todayDayNumber(now)).refundMinor
  const data = { preview: true as const, policy_ref: policy.ref, status: policy.status, refund: refundView(services, policy, { at: now, refundMinor }) }
  return { data: { mode: policy.source, data }, replayed: false }
}

/** The cancel answer of a cancelled policy. */
function cancellationPayload(services: Pick<Services, 'catalogue'>, policy: PolicyRecord) {
  const cancellation = policy.cancellation!
  return { policy_ref: policy.ref, status: policy.status, refund: refundView(services, policy, cancellation), cancelled_at: isoTimestamp(cancellation.at) }
}
