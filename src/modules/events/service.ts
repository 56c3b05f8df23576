/**
 * @module Events: written in the transaction of the change they report (an outbox), so an
 * acknowledged change always has its event and a failed one never has; listed per session, oldest
 * first; and queued for the session's one webhook endpoint (delivery.ts sends them).
 */
import { randomBytes } from 'node:crypto'
import { isoTimestamp } from '../../domain/dates'
import { ApiError, throwIfInvalid } from '../../errors'
import { EVENT_ID, EVENT_TYPES, newEvent } from '../../domain/events'
import type { ListedEvent, SessionRow, Stores } from '../../storage/storage'
import { businessNow } from '../../domain/session-clock'
import type { Services } from '../services'
import { inLiveSession } from '../session/service'
import type { EventsRequest, ListedEventView } from './model'
import { isDelivered } from './delivery'
import { targetProblem } from './outbound'

const PAGE = 100
export const TEST_MESSAGE = 'A test event from the travel protection sandbox.'

type Deps = Pick<Services, 'storage' | 'clock' | 'config' | 'hostNames'>
type Session = SessionRow

/** The session's events after the cursor, in recorded order, up to the first that has not happened yet (storage.ts). */
export async function listEvents(services: Deps, session: Session, request: EventsRequest) {
  const limit = request.limit ?? PAGE
  const wallNow = services.clock()
  // Listed up to the session's business time: a pending certificate's `document.ready` shows once its clock gets there.
  const now = businessNow(wallNow, session)
  const rows = await inLiveSession(services.storage, session.id, wallNow, async ({ events }) => {
    const after = request.after === undefined ? 0 : (await events.find(session.id, request.after))?.id
    if (after === undefined) throwIfInvalid([{ field: 'after', issue: 'must be the id of an event of this session' }])
    return events.list(session.id, after!, now, limit + 1)
  })
  const page = rows.slice(0, limit)
  return { events: page.map(eventView), next_cursor: page.at(-1)?.ref ?? request.after ?? null, has_more: rows.length > limit }
}

function eventView(event: ListedEvent): ListedEventView {
  const { delivery } = event
  const delivered = isDelivered(delivery?.attempts.at(-1)?.status ?? null)
  return {
    ...JSON.parse(event.body),
    delivery: delivery && {
      state: delivery.nextAt !== null ? 'pending' : delivered ? 'delivered' : 'failed',
      attempts: delivery.attempts.map((attempt) => ({ ...attempt, at: isoTimestamp(attempt.at) })),
      next_attempt_at: delivery.nextAt === null ? null : isoTimestamp(delivery.nextAt),
    },
  }
}

/**
 * Registers (or replaces, with a new secret) the session's endpoint, or removes it (`null`, which
 * drops the deliveries still pending). The secret is answered this once.
 */
export async function registerWebhook(services: Deps, session: Session, network: string, url: string | null) {
  const names = { hostNames: services.hostNames, callers: [`s:${session.id}`, network] }
  const problem = url === null ? null : await targetProblem(url, services.config.webhookTargets, names)
  if (problem) throwIfInvalid([{ field: 'url', issue: problem }])
  const secret = url === null ? undefined : `whsec_${randomBytes(24).toString('hex')}`
  const now = services.clock()
  await inLiveSession(services.storage, session.id, now, ({ webhooks }) => webhooks.set(session.id, url === null ? null : { url, secret: secret! }, now))
  return { url, ...(secret && { secret }), event_types: [...EVENT_TYPES] }
}

async function requireWebhook(stores: Stores, sessionId: number): Promise<void> {
  if (!(await stores.webhooks.find(sessionId))) {
    throw new ApiError('webhook_not_registered')
  }
}

/** A `webhook.test` event, delivered like any other. */
export async function sendTestEvent(services: Deps, session: Session) {
  const wallNow = services.clock()
  const event = newEvent(session, 'webhook.test', { message: TEST_MESSAGE }, businessNow(wallNow, session))
  await inLiveSession(services.storage, session.id, wallNow, async (stores) => {
    await requireWebhook(stores, session.id)
    await stores.events.append(event)
  })
  return JSON.parse(event.body)
}

/** Queues the event for delivery again, now, with the same id and body and a full set of attempts. */
export async function resendEvent(services: Deps, session: Session, ref: string) {
  const now = services.clock()
  await inLiveSession(services.storage, session.id, now, async (stores) => {
    const event = EVENT_ID.test(ref) ? await stores.events.find(session.id, ref) : undefined
    // An event the session's clock has not reached yet is not there to resend; delivery runs on wall time.
    if (!event || event.at > businessNow(now, session)) throw new ApiError('event_not_found')
    await requireWebhook(stores, session.id)
    await stores.events.requeue(event.id, now)
  })
  return { event_id: ref, next_attempt_at: isoTimestamp(now) }
}
