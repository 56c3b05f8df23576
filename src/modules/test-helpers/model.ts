/** @module Schemas of the test helpers: the session's clock and its advance, and the insurer's side of a policy. */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { MAX_CLOCK_AHEAD_DAYS } from '../../domain/session-clock'

export const AdvanceBody = t.Union(
  [
    t.Object(
      {
        days: Type.Integer({
          minimum: 1,
          description: `Whole days to move forward (the time of day is kept); the clock may run at most ${MAX_CLOCK_AHEAD_DAYS} days ahead (\`clock_too_far\`).`,
          'x-issue': 'must be a whole number of days, at least 1',
        }),
      },
      { additionalProperties: false },
    ),
    t.Object(
      {
        to: t.Union([t.String({ format: 'date' }), t.String({ format: 'date-time' })], {
          description: 'A date (`YYYY-MM-DD`: its first instant, UTC) or an instant (ISO 8601) to move to: later than the clock.',
          'x-issue': 'must be a date (YYYY-MM-DD) or an ISO 8601 instant',
        }),
      },
      { additionalProperties: false },
    ),
  ],
  { 'x-issue': 'must be {"days": n} or {"to": date or instant}' },
)

/** What an advance recorded, beside the clock it set (the route adds the clock's fields). */
export const RecordedEvents = {
  recorded_events: t.Array(
    t.Object({
      event_id: t.String(),
      type: t.UnionEnum(['policy.started', 'policy.ended']),
      policy_ref: t.String(),
      created_at: t.String({ format: 'date-time' }),
    }),
    { description: 'The cover events (`policy.started`, `policy.ended`) the advance recorded, in date order; listed and delivered like any other.' },
  ),
}

export type AdvanceRequest = typeof AdvanceBody.static
