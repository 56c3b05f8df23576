/** @module Schemas of events (as delivered and as listed), the events list, the webhook endpoint and a resend. */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { EVENT_ID, EVENT_TYPES, EVENT_VERSION } from '../../domain/events'
import { PolicyEventData, ReadData } from '../policies/model'

const Timestamp = t.String({ format: 'date-time' })
const EventId = t.String({ pattern: EVENT_ID.source, description: "The event's id: a resend delivers the same id again, so receivers can drop repeats." })

/** The body POSTed to the webhook endpoint, byte for byte what the events list shows of it. */
export const EventBody = t.Object(
  {
    id: EventId,
    type: t.UnionEnum(EVENT_TYPES),
    version: t.Optional(
      t.Literal(EVENT_VERSION, {
        description:
          'The format of events: 2 since 2026-11-26, when policy events stopped carrying every endorsement. ' +
          'Absent from events recorded before (format 1), which a session may still list or resend.',
      }),
    ),
    created_at: t.String({ format: 'date-time', description: 'When it happened (for `document.ready`, when the certificate became ready).' }),
    session_ref: t.String({ description: 'The session whose change this reports.' }),
    data: t.Union([PolicyEventData, t.Object({ message: t.String() }), t.Object(ReadData.properties, { description: 'Format 1: with every endorsement.' })], {
      description:
        'The policy as read-back shows it right after the change, less its `endorsements` (their count, and in `policy.endorsed` ' +
        'the one made); `{ "message" }` for `webhook.test`. Events of format 1 carried the policy with every endorsement.',
    }),
  },
  { description: 'An event, as delivered.' },
)

const AttemptModel = t.Object({
  attempt: Type.Integer({ description: '1 for the first delivery attempt, then 2, 3…' }),
  at: Timestamp,
  status: t.Union([Type.Integer(), t.Null()], { description: "The endpoint's HTTP status; null when it gave none." }),
  error: t.Union([t.Literal('timeout'), t.Literal('connection_failed'), t.Literal('target_refused'), t.Null()], {
    description: 'Why there was no status: no answer within 5 s, no connection, or an address this sandbox does not deliver to.',
  }),
})

export const ListedEvent = t.Object({
  ...EventBody.properties,
  delivery: t.Union(
    [
      t.Null(),
      t.Object({
        state: t.UnionEnum(['pending', 'delivered', 'failed'], {
          description: '`delivered`: an attempt got a 2xx; `failed`: no attempt is left (or the endpoint was removed).',
        }),
        attempts: t.Array(AttemptModel, { description: 'Every attempt, oldest first.' }),
        next_attempt_at: t.Union([Timestamp, t.Null()]),
      }),
    ],
    { description: 'Its delivery to the webhook endpoint; null when none was registered when it happened.' },
  ),
})

export const EventsBody = t.Object(
  {
    after: t.Optional(
      t.String({
        pattern: EVENT_ID.source,
        description: "List the events after this one (the previous answer's `next_cursor`).",
        'x-issue': 'must be an event id',
      }),
    ),
    limit: t.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'At most this many (100 by default).', 'x-issue': 'must be a whole number from 1 to 100' }),
    ),
  },
  { additionalProperties: false, 'x-issue': 'must be an object' },
)

export const EventsData = t.Object({
  events: t.Array(ListedEvent, { description: 'Oldest first.' }),
  next_cursor: t.Union([EventId, t.Null()], {
    description: 'Pass as `after` to list what comes next: the last event listed, else the `after` sent; null when neither.',
  }),
  has_more: t.Boolean({ description: 'Whether more events are there already.' }),
})

export const WebhookBody = t.Object(
  {
    url: t.Union([t.String({ maxLength: 2048 }), t.Null()], {
      description: 'Where to POST events (http or https); null removes the endpoint. Registering again replaces it, with a new secret.',
      'x-issue': 'must be a URL or null',
    }),
  },
  { additionalProperties: false, 'x-issue': 'must be an object' },
)

export const WebhookData = t.Object({
  url: t.Union([t.String(), t.Null()]),
  secret: t.Optional(t.String({ pattern: '^whsec_[0-9a-f]{48}$', description: 'The signing secret, shown this once: keep it to verify `Sandbox-Signature`.' })),
  event_types: t.Array(t.UnionEnum(EVENT_TYPES)),
})

export const EventParams = t.Object({ event_id: t.String() })

export const ResendData = t.Object({
  event_id: EventId,
  next_attempt_at: Timestamp,
})

export type EventsRequest = typeof EventsBody.static
export type ListedEventView = typeof ListedEvent.static
