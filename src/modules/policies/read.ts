/**
 * @module Read-back of a policy: the policy as it stands and every endorsement, oldest first. The
 * certificate is drawn from the same view, so the download and the JSON never disagree.
 */
import { isoTimestamp } from '../../domain/dates'
import type { EndorsementRecord, PolicyRecord } from '../../storage/storage'
import type { Services } from '../../services'
import { toAmount } from '../plans/pricing'
import { inLiveSession } from '../session/service'
import type { EndorsementModel, ReadData, Scenario } from './model'
import { findPolicy, issuedPayload, refundView } from './service'

export type PolicyView = typeof ReadData.static
type EndorsementView = typeof EndorsementModel.static

/** Where each stored change sits in the policy's answers (the modify answer uses the same paths). */
const FIELD_PATH: Record<string, EndorsementView['field']> = {
  end_date: 'trip.end_date',
  destination_country: 'trip.destination_country',
  partner_reference: 'partner_reference',
}

/** A policy of this session with its history, or `policy_not_found` (malformed, unknown, foreign, expired: all alike). */
export async function readPolicy(services: Pick<Services, 'storage' | 'clock'>, session: { id: number }, ref: string) {
  // One transaction: the policy row and its history come from the same state, even while another
  // process endorses it, and a session that ended while this request waited resolves nothing.
  return inLiveSession(services.storage, session.id, services.clock(), async ({ policies }) => {
    const policy = await findPolicy(policies, session.id, ref)
    return { policy, endorsements: await policies.endorsements(policy.id) }
  })
}

/** The policy as it stands at `now` (its certificate may still be pending), with its history. */
export function policyView(services: Pick<Services, 'catalogue'>, policy: PolicyRecord, endorsements: EndorsementRecord[], now: number): PolicyView {
  const { cancellation } = policy
  return {
    ...issuedPayload(services, policy, now),
    updated_at: isoTimestamp(policy.updatedAt),
    // Stored oldest first by sequence, which has no gap: the position is the sequence.
    endorsements: endorsements.map((endorsement, index) => endorsementView(services, policy.currency, endorsement, index + 1)),
    ...(cancellation && { cancellation: { cancelled_at: isoTimestamp(cancellation.at), refund: refundView(services, policy, cancellation) } }),
  }
}

function endorsementView(services: Pick<Services, 'catalogue'>, currency: string, endorsement: EndorsementRecord, sequence: number): EndorsementView {
  const [[field, change]] = Object.entries(endorsement.changes) as [[string, { from: string | null; to: string }]]
  return {
    sequence,
    scenario: endorsement.scenario as Scenario,
    field: FIELD_PATH[field]!,
    old_value: change.from,
    new_value: change.to,
    premium_change: toAmount(services.catalogue, endorsement.premiumChangeMinor, currency),
    created_at: isoTimestamp(endorsement.createdAt),
  }
}
