/**
 * @module What issue, modify and cancel share: who calls (`Caller`), what they answer (`Answer`), the
 * services they need, the insurer of a UAT plan or policy, the event a change writes, and the
 * session's policy a change applies to.
 */
import { ApiError } from '../../errors'
import type { BusinessOutcome } from '../../domain/business-outcomes'
import type { PolicyRecord, SessionRow, Source, Stores } from '../../storage/storage'
import type { Services } from '../services'
import type { InsurerAdapter } from '../insurer/adapter'
import { sessionEnded } from '../session/service'
import { earlierAnswer } from './idempotency'
import { findPolicy, policyEventData, type PolicyView } from './read'
import { newEvent, type EventType } from '../../domain/events'

/** An operation's answer and what produced it (the envelope's `mode`). */
export interface Answer<T> {
  mode: Source
  data: T
}

export interface Caller {
  /** The caller's session, with its clock (domain/session-clock.ts). */
  session: SessionRow
  /** The session's cookie token: the key of the Idempotency-Key's hash. */
  sessionToken: string
  requestId: string
  /** The `Idempotency-Key` header as sent (checked here, after the body), or null. */
  idempotencyKey: string | null
  /** A business outcome asked for with `Sandbox-Outcome` (issue only), or null. */
  outcome: BusinessOutcome | null
}

/** What issue, modify and cancel need of the app's services. */
export type Deps = Pick<Services, 'storage' | 'clock' | 'catalogue' | 'insurer'>

/** The insurer for a UAT-sourced plan or policy; without a gateway it cannot be reached. */
export function insurerOf(services: Deps): InsurerAdapter {
  if (!services.insurer) throw new ApiError('upstream_unavailable', { variant: 'noGateway', retryAfter: 60 })
  return services.insurer
}

/**
 * The event of a change at `at` (the session's clock), with the policy as read-back shows it then
 * (less its history): written in the change's transaction. Answers its id.
 */
export async function recordEvent(stores: Stores, session: Caller['session'], type: EventType, view: PolicyView, at: number): Promise<string> {
  const event = newEvent(session, type, policyEventData(view, type), at)
  await stores.events.append(event)
  return event.ref
}

/**
 * `session_expired` when the session ended after its request was admitted: its references are gone
 * then, and "not found" would mislead. Called before answering that something was not found.
 */
export async function refuseEndedSession(services: Deps, sessionId: number): Promise<void> {
  if (!(await services.storage.sessions.isLive(sessionId, services.clock()))) throw sessionEnded()
}

/** The session's policy with this ref; `session_expired` when the session ended while the request waited. */
export async function livePolicy(services: Deps, sessionId: number, ref: string): Promise<PolicyRecord> {
  return findPolicy(services.storage.policies, sessionId, ref).catch(async (error) => {
    await refuseEndedSession(services, sessionId)
    throw error
  })
}

/**
 * A cancelled policy takes no change, unless this request repeats one whose first answer was
 * committed since it last looked (another process, a cancel racing its own repeat): that replays.
 */
export async function replayOrRefuse<T>(services: Deps, sessionId: number, key: string | undefined, print: string) {
  const first = await earlierAnswer<T>(services.storage, sessionId, key, print)
  if (first) return first
  throw cancelled()
}

const cancelled = () => new ApiError('policy_cancelled')

export function refuseCancelled(policy: PolicyRecord): PolicyRecord {
  if (policy.status === 'cancelled') throw cancelled()
  return policy
}
