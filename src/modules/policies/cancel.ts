/**
 * @module Policy cancellation with its refund, or, with `preview`, the refund alone.
 */
import { randomUUID } from 'node:crypto'
import { isoTimestamp, todayDayNumber } from '../../domain/dates'
import type { Cancellation, PolicyRecord, Stores } from '../../storage/storage'
import { businessNow } from '../../domain/session-clock'
import type { Services } from '../services'
import { checkedKey, commitOnce, earlierAnswer, fingerprint, upstreamKey } from './idempotency'
import type { CancelRequest } from './model'
import { refundOf } from './refund'
import { findPolicy, policyView, refundView } from './read'
import { insurerOf, livePolicy, recordEvent, refuseCancelled, replayOrRefuse, type Answer, type Caller, type Deps } from './operation'

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
  const upstream =
    policy.source === 'uat_gateway'
      ? await insurerOf(services).cancel(
          { upstreamRef: policy.upstreamRef!, dryRun: false },
          { requestId: caller.requestId, idempotencyKey: upstreamKey(session.ref, key, `cancel ${ref}`) },
        )
      : null
  const wallNow = services.clock()
  const now = businessNow(wallNow, session)
  return commitOnce(services.storage, { id: session.id, now: wallNow }, key, print, async (stores) => {
    const current = refuseCancelled(await findPolicy(stores.policies, session.id, ref))
    const refundMinor = upstream?.refundMinor ?? refundOf(current.trip, current.premiumMinor, todayDayNumber(now)).refundMinor
    const cancelled = await writeCancellation(services, stores, session, current, { at: now, refundMinor, by: 'partner' })
    return { mode: current.source, data: cancellationPayload(services, cancelled) }
  })
}

/** Writes the cancellation and its `policy.cancelled` event together (on PostgreSQL, pipelined: one round trip); answers the policy cancelled. */
export async function writeCancellation(
  services: Pick<Services, 'catalogue'>,
  stores: Stores,
  session: Caller['session'],
  current: PolicyRecord,
  cancellation: Cancellation,
): Promise<PolicyRecord> {
  const cancelled: PolicyRecord = { ...current, status: 'cancelled', cancellation, updatedAt: cancellation.at, coverageDueAt: null }
  const history = current.status === 'issued' ? [] : await stores.policies.endorsements(current.id)
  const view = policyView(services, cancelled, history, cancellation.at)
  await Promise.all([stores.policies.cancel(cancelled), recordEvent(stores, session, 'policy.cancelled', view, cancellation.at)])
  return cancelled
}

async function previewCancel(services: Deps, caller: Caller, ref: string) {
  const policy = refuseCancelled(await livePolicy(services, caller.session.id, ref))
  const now = businessNow(services.clock(), caller.session)
  const refundMinor =
    policy.source === 'uat_gateway'
      ? (await insurerOf(services).cancel({ upstreamRef: policy.upstreamRef!, dryRun: true }, { requestId: caller.requestId, idempotencyKey: randomUUID() }))
          .refundMinor
      : refundOf(policy.trip, policy.premiumMinor, todayDayNumber(now)).refundMinor
  const data = {
    preview: true as const,
    policy_ref: policy.ref,
    status: policy.status,
    refund: refundView(services, policy, { at: now, refundMinor, by: 'partner' }),
  }
  return { data: { mode: policy.source, data }, replayed: false }
}

/** The cancel answer of a cancelled policy. */
export function cancellationPayload(services: Pick<Services, 'catalogue'>, policy: PolicyRecord) {
  const cancellation = policy.cancellation!
  return {
    policy_ref: policy.ref,
    status: policy.status,
    refund: refundView(services, policy, cancellation),
    cancelled_at: isoTimestamp(cancellation.at),
    cancelled_by: cancellation.by,
  }
}
