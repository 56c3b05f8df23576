/** @module What an event is: its types, its id, and its body, which is delivered and listed byte for byte. */
import { randomBytes } from 'node:crypto'
import { isoTimestamp } from './dates'

/** What changes a policy, its certificate becoming ready, and a test event sent on request. */
export const EVENT_TYPES = ['policy.issued', 'policy.endorsed', 'policy.cancelled', 'document.ready', 'webhook.test'] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** The form of an event's id. */
export const EVENT_ID = /^evt_[0-9a-f]{20}$/

/** An event of `session`, happening at `at`; its body is what is delivered and listed, byte for byte. */
export function newEvent(session: { id: number; ref: string }, type: EventType, data: unknown, at: number) {
  const ref = `evt_${randomBytes(10).toString('hex')}`
  return { ref, sessionId: session.id, type, at, body: JSON.stringify({ id: ref, type, created_at: isoTimestamp(at), session_ref: session.ref, data }) }
}
