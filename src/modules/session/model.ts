/** @module Schemas of the session endpoint. */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'

/** Explicit creation: an empty body, `{}`, or a shorter lifetime for testing expiry. */
export const SessionBody = t.Object(
  {
    lifetime_minutes: t.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 60,
        description:
          "A shorter session, to test `session_expired` handling: 1 to 60 whole minutes (never longer than the server's own lifetime). Default: the server's lifetime.",
        'x-issue': 'must be a whole number of minutes from 1 to 60',
      }),
    ),
  },
  { additionalProperties: false, 'x-issue': 'must be an object' },
)

export const SessionData = t.Object({
  session_ref: t.String({ pattern: '^sbx_[0-9a-f]+$', description: 'Public session reference; not the cookie.' }),
  expires_at: t.String({ format: 'date-time', description: 'Session end, fixed at creation (`limits.session_minutes` later).' }),
  limits: t.Object({
    requests: Type.Integer({ description: 'Requests per window.' }),
    window_minutes: t.Number({ description: 'Window length in minutes.' }),
    session_minutes: t.Number({ description: "This session's lifetime in minutes: the server's, or the shorter `lifetime_minutes` asked for." }),
  }),
  console_url: t.String({
    description:
      "The session's console, at the address the call was sent to (behind a trusted proxy, the one it forwards): a read-only page of its policies, events and calls for a person's browser. " +
      'Print it when a test fails. Also answered by `POST /api/sandbox/console`.',
  }),
})
