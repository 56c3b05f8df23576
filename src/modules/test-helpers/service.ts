/**
 * @module Test helpers: what has no production counterpart. The session's clock (read, advanced)
 * and the insurer's side of a policy on demand (it cancels, it reissues the certificate). Each
 * records exactly what the real change would, and refuses what a real one would refuse.
 */
import { isoTimestamp } from '../../domain/dates'
import { advancedOffset, businessNow, clockView } from '../../domain/session-clock'
import { ApiError } from '../../errors'
import type { PolicyRecord, SessionRow } from '../../storage/storage'
import type { Services } from '../services'
import { inLiveSession, sessionEnded } from '../session/service'
import { cancellationPayload, writeCancellation } from '../policies/cancel'
import { recordCoverage } from '../policies/coverage'
import { recordEvent } from '../policies/operation'
import { findPolicy, policyView } from '../policies/read'
import type { AdvanceRequest } from './model'

type Deps = Pick<Services, 'storage' | 'clock' | 'catalogue' | 'insurer'>

/** The clock at the request's own instant (`admittedAt`), the one its answer's meta shows too. */
export function readClock(admittedAt: number, session: SessionRow) {
  return clockView(admittedAt, session.clockOffsetMs)
}

/**
 * Moves the session's clock forward and records, in date order, the cover events it passes. Refused
 * where the insurer's own clock would disagree: a session holding a policy the test insurer issued.
 */
export async function advanceClock(services: Deps, session: SessionRow, wallNow: number, request: AdvanceRequest) {
  const { offset, recorded } = await services.storage.transaction(async (stores) => {
    // The live check and the hold in one read: two advances of a session take turns.
    const current = await stores.sessions.clockOffset(session.id, wallNow)
    if (current === null) throw sessionEnded()
    const offset = advancedOffset(wallNow, current, request)
    const policies = await stores.policies.ofSession(session.id)
    if (policies.some((policy) => policy.source === 'uat_gateway')) throw new ApiError('clock_not_movable', { variant: 'insurerPolicies' })
    await stores.sessions.setClockOffset(session.id, offset)
    const recorded = await recordCoverage(services, stores, { ...session, clockOffsetMs: offset }, policies, wallNow + offset)
    return { offset, recorded }
  })
  // Committed: the answer (its meta too) shows the new clock.
  session.clockOffsetMs = offset
  return { ...clockView(wallNow, offset), recorded_events: recorded.map((event) => ({ ...event, created_at: isoTimestamp(event.created_at) })) }
}

/** The session's simulation policy, for the insurer's side: a policy the test insurer issued changes only there. */
function simulated(policy: PolicyRecord): PolicyRecord {
  if (policy.source === 'uat_gateway') throw new ApiError('insurer_side_unavailable')
  if (policy.status === 'cancelled') throw new ApiError('policy_cancelled')
  return policy
}

/** The insurer cancels the policy: the whole premium back, whenever it happens, and `policy.cancelled` saying so. */
export async function insurerCancel(services: Deps, session: SessionRow, ref: string) {
  const wallNow = services.clock()
  const now = businessNow(wallNow, session)
  return inLiveSession(services.storage, session.id, wallNow, async (stores) => {
    const current = simulated(await findPolicy(stores.policies, session.id, ref))
    const cancelled = await writeCancellation(services, stores, session, current, { at: now, refundMinor: current.premiumMinor, by: 'insurer' })
    return cancellationPayload(services, cancelled)
  })
}

/** The insurer reissues the certificate: a new version, ready at once, and `document.ready` again. */
export async function reissueCertificate(services: Deps, session: SessionRow, ref: string) {
  const wallNow = services.clock()
  const now = businessNow(wallNow, session)
  return inLiveSession(services.storage, session.id, wallNow, async (stores) => {
    const current = simulated(await findPolicy(stores.policies, session.id, ref))
    const reissued: PolicyRecord = { ...current, documentVersion: current.documentVersion + 1, documentReadyAt: now, updatedAt: now }
    const history = current.status === 'issued' ? [] : await stores.policies.endorsements(current.id)
    const view = policyView(services, reissued, history, now)
    await Promise.all([stores.policies.update(reissued), recordEvent(stores, session, 'document.ready', view, now)])
    return view
  })
}
