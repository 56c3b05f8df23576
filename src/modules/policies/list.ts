/** @module The session's policies, newest first, each as a line: where it stands, what it cost, its refund. */
import { isoTimestamp } from '../../domain/dates'
import { businessNow, coverageAt } from '../../domain/session-clock'
import type { PolicyRecord, SessionRow } from '../../storage/storage'
import { toAmount } from '../plans/pricing'
import type { Services } from '../services'
import type { PoliciesRequest } from './model'
import { refundView } from './read'

const PAGE = 50

export async function listPolicies(services: Pick<Services, 'storage' | 'clock' | 'catalogue'>, session: SessionRow, request: PoliciesRequest) {
  const limit = request.limit ?? PAGE
  const before = request.cursor === undefined ? Number.POSITIVE_INFINITY : Number(request.cursor)
  const now = businessNow(services.clock(), session)
  const newest = (await services.storage.policies.ofSession(session.id)).filter((policy) => policy.id < before).reverse()
  const page = newest.slice(0, limit)
  return {
    policies: page.map((policy) => policyLine(services, policy, now)),
    next_cursor: newest.length > limit ? String(page.at(-1)!.id) : null,
  }
}

/** A policy as the list shows it, at `now` on the session's clock (the document's example is built by it too). */
export function policyLine(services: Pick<Services, 'catalogue'>, policy: PolicyRecord, now: number) {
  return {
    policy_ref: policy.ref,
    status: policy.status,
    coverage: coverageAt(policy.trip, policy.status === 'cancelled', now),
    plan_id: policy.planId,
    trip: policy.trip,
    premium: toAmount(services.catalogue, policy.premiumMinor, policy.currency),
    currency: policy.currency,
    ...(policy.partnerReference !== null && { partner_reference: policy.partnerReference }),
    created_at: isoTimestamp(policy.createdAt),
    updated_at: isoTimestamp(policy.updatedAt),
    ...(policy.cancellation && {
      cancellation: {
        cancelled_at: isoTimestamp(policy.cancellation.at),
        cancelled_by: policy.cancellation.by,
        refund: refundView(services, policy, policy.cancellation),
      },
    }),
  }
}
