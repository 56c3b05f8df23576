/**
 * @module Policy modification: one correction scenario, priced as the plan prices it (by the insurer
 * for a UAT policy), written with its endorsement; or, with `preview`, what it would answer.
 */
import { businessNow } from '../../domain/session-clock'
import { coverageDueAt } from './coverage'
import { randomUUID } from 'node:crypto'
import { ApiError } from '../../errors'
import { isoTimestamp, todayDayNumber } from '../../domain/dates'
import { agesKey, type Trip } from '../../domain/trip'
import type { EndorsementRecord, PolicyRecord } from '../../storage/storage'
import { premiumInPaise, toAmount, toMinorUnits } from '../plans/pricing'
import { checkedKey, commitOnce, earlierAnswer, fingerprint, upstreamKey } from './idempotency'
import type { ModifyRequest } from './model'
import { findPolicy, policyView } from './read'
import { applyScenario, checkScenarioFields, type Correction } from './scenarios'
import { insurerOf, livePolicy, recordEvent, refuseCancelled, replayOrRefuse, type Answer, type Caller, type Deps } from './operation'

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
  const wallNow = services.clock()
  const now = businessNow(wallNow, session)
  // The scenario is applied to the policy as it is now, in the transaction that writes it.
  return commitOnce(services.storage, { id: session.id, now: wallNow }, key, print, async (stores) => {
    const current = refuseCancelled(await findPolicy(stores.policies, session.id, ref))
    const { updated, endorsement, history, answer } = corrected(
      services,
      current,
      await stores.policies.endorsements(current.id),
      request,
      now,
      upstream?.premiumMinor,
    )
    updated.coverageDueAt = coverageDueAt(updated, session)
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
  const correction = applyScenario(policy, request, todayDayNumber(businessNow(services.clock(), caller.session)))
  const premiumMinor =
    policy.source === 'uat_gateway'
      ? (
          await insurerOf(services).endorse(upstreamCorrection(policy, request, correction, true), {
            requestId: caller.requestId,
            idempotencyKey: randomUUID(),
          })
        ).premiumMinor
      : simulatedPremium(services, policy, correction.trip)
  const data = { preview: true as const, ...correctionPayload(services, policy, correction, premiumMinor) }
  return { data: { mode: policy.source, data }, replayed: false }
}

/**
 * Asks the insurer to endorse the correction, once it is known to apply. A repeat whose first answer
 * was committed meanwhile (another process) finds the policy already corrected: it replays instead.
 */
async function endorseUpstream(services: Deps, caller: Caller, policy: PolicyRecord, request: ModifyRequest, key: string | undefined, print: string) {
  let correction: Correction
  try {
    correction = applyScenario(policy, request, todayDayNumber(businessNow(services.clock(), caller.session)))
  } catch (error) {
    if (await earlierAnswer(services.storage, caller.session.id, key, print)) return null
    throw error
  }
  return insurerOf(services).endorse(upstreamCorrection(policy, request, correction, false), {
    requestId: caller.requestId,
    idempotencyKey: upstreamKey(caller.session.ref, key, `modify ${policy.ref}`),
  })
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
    throw new ApiError('scenario_not_applicable', {
      variant: 'notCovered',
      details: [{ field: 'destination_country', issue: 'is outside the cover of this plan' }],
    })
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
function corrected(
  services: Deps,
  policy: PolicyRecord,
  earlier: EndorsementRecord[],
  request: ModifyRequest,
  now: number,
  upstreamPremiumMinor: number | undefined,
) {
  const correction = applyScenario(policy, request, todayDayNumber(now))
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
