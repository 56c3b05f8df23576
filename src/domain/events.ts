/** @module What an event is: its types, its id, and its body, which is delivered and listed byte for byte. */
import { isoTimestamp } from './dates'
import { newId } from './ids'

/** What changes a policy, its cover starting and ending, its certificate becoming ready, and a test event sent on request. */
export const EVENT_TYPES = ['policy.issued', 'policy.endorsed', 'policy.cancelled', 'policy.started', 'policy.ended', 'document.ready', 'webhook.test'] as const
export type EventType = (typeof EVENT_TYPES)[number]

/**
 * The events' format, in every body: 2 since 2026-11-26, when policy events stopped carrying the
 * policy's whole history (docs/api.md#events-and-webhooks).
 */
export const EVENT_VERSION = 2

/** The form of an event's id. */
export const EVENT_ID = /^evt_[0-9a-f]{20}$/

/**
 * An event of `session`, happening at `at` on the session's clock; its body is what is delivered and
 * listed, byte for byte. Its delivery is due at the same moment in wall time (`deliverAt`).
 */
export function newEvent(session: { id: number; ref: string; clockOffsetMs: number }, type: EventType, data: unknown, at: number) {
  const ref = `evt_${newId()}`
  return {
    ref,
    sessionId: session.id,
    type,
    at,
    deliverAt: at - session.clockOffsetMs,
    body: JSON.stringify({ id: ref, type, version: EVENT_VERSION, created_at: isoTimestamp(at), session_ref: session.ref, data }),
  }
}
