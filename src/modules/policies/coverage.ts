/**
 * @module Cover over time: `policy.started` and `policy.ended`, recorded once each, in date order,
 * when the session's clock reaches them: at issue (cover that starts that day), when the clock is
 * advanced (test helpers), and as wall time passes (`recordDueCoverage`, polled by every process).
 */
import { dueCoverage } from '../../domain/session-clock'
import type { PolicyRecord, SessionRow, Stores } from '../../storage/storage'
import type { Services } from '../services'
import { recordEvent } from './operation'
import { policyView } from './read'

/** Policies whose cover events are recorded per poll, at most. */
const PER_POLL = 100

/** How often every process looks for cover events that wall time has brought due. */
export const COVERAGE_POLL_MS = 1_000

/** Polls `recordDueCoverage` until stopped; a failed poll is logged and the next one tries again. */
export function startCoverage(services: Pick<Services, 'storage' | 'clock' | 'catalogue'>, logError: (fields: Record<string, unknown>) => void) {
  let polling: Promise<unknown> | null = null
  // One poll at a time: a slow one is not joined by the next.
  const timer = setInterval(() => {
    polling ??= recordDueCoverage(services)
      .catch((error) => logError({ level: 'error', msg: 'cover events failed', error: String(error) }))
      .finally(() => (polling = null))
  }, COVERAGE_POLL_MS)
  return {
    async stop(): Promise<void> {
      clearInterval(timer)
      await polling
    },
  }
}

const startsFirst = (type: string) => (type === 'policy.started' ? 0 : 1)

/** When the next cover event of `policy` falls due in wall time, after `recorded`; null when none will. */
export function coverageDueAt(
  policy: Pick<PolicyRecord, 'status' | 'trip' | 'createdAt' | 'coverageRecorded'>,
  session: { clockOffsetMs: number },
  recorded = policy.coverageRecorded,
): number | null {
  if (policy.status === 'cancelled') return null
  const { nextAt } = dueCoverage(policy.trip, policy.createdAt, recorded, Number.NEGATIVE_INFINITY)
  return nextAt === null ? null : nextAt - session.clockOffsetMs
}

/**
 * Records the cover events of `policies` due by business time `now`, oldest first across them (a
 * tie in policy order, a start before an end), each with the policy as it stood then; saves each
 * policy's progress. Answers the events recorded.
 */
export async function recordCoverage(services: Pick<Services, 'catalogue'>, stores: Stores, session: SessionRow, policies: PolicyRecord[], now: number) {
  const live = policies.filter((policy) => policy.status !== 'cancelled' && policy.coverageRecorded < 2)
  // A policy with nothing left to record but still a due time (cancelled by an older build) is not claimed again.
  for (const policy of policies) if (!live.includes(policy) && policy.coverageDueAt !== null) await stores.policies.update({ ...policy, coverageDueAt: null })
  const due = live.flatMap((policy, order) =>
    dueCoverage(policy.trip, policy.createdAt, policy.coverageRecorded, now).due.map((event) => ({ ...event, policy, order })),
  )
  due.sort((a, b) => a.at - b.at || a.order - b.order || startsFirst(a.type) - startsFirst(b.type))
  const recorded: { event_id: string; type: 'policy.started' | 'policy.ended'; policy_ref: string; created_at: number }[] = []
  for (const { type, at, policy } of due) {
    const history = policy.status === 'issued' ? [] : await stores.policies.endorsements(policy.id)
    const ref = await recordEvent(stores, session, type, policyView(services, policy, history, at), at)
    recorded.push({ event_id: ref, type, policy_ref: policy.ref, created_at: at })
  }
  for (const policy of live) {
    const { recorded: progress } = dueCoverage(policy.trip, policy.createdAt, policy.coverageRecorded, now)
    const dueAt = coverageDueAt(policy, session, progress)
    if (progress !== policy.coverageRecorded || dueAt !== policy.coverageDueAt) {
      await stores.policies.update({ ...policy, coverageRecorded: progress, coverageDueAt: dueAt })
    }
  }
  return recorded
}

/**
 * Records the cover events that wall time has brought due, in every live session: each policy is
 * claimed in the transaction that records its events (storage.ts, `coverageDue`), so every process
 * may poll and each event is recorded once.
 */
export async function recordDueCoverage(services: Pick<Services, 'storage' | 'clock' | 'catalogue'>): Promise<number> {
  const wallNow = services.clock()
  // A plain read first: most polls find nothing due and need no write transaction.
  if ((await services.storage.policies.coverageDue(wallNow, 1)).length === 0) return 0
  return services.storage.transaction(async (stores) => {
    const bySession = new Map<number, { session: SessionRow; policies: PolicyRecord[] }>()
    for (const { policy, session } of await stores.policies.coverageDue(wallNow, PER_POLL)) {
      const claimed = bySession.get(session.id) ?? { session, policies: [] }
      claimed.policies.push(policy)
      bySession.set(session.id, claimed)
    }
    let count = 0
    // Sessions in id order: two instances recording take each session's event lock in the same order.
    for (const { session, policies } of [...bySession.values()].sort((a, b) => a.session.id - b.session.id)) {
      count += (await recordCoverage(services, stores, session, policies, wallNow + session.clockOffsetMs)).length
    }
    return count
  })
}
