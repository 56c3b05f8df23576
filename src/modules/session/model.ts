/** @module Schemas of the session endpoint. */
import { t } from 'elysia'

/** Explicit creation takes no fields: an empty body or `{}`. */
export const SessionBody = t.Object({}, { additionalProperties: false, 'x-issue': 'must be an empty object' })

export const SessionData = t.Object({
  session_ref: t.String({ pattern: '^sbx_[0-9a-f]+$', description: 'Public session reference; not the cookie.' }),
  expires_at: t.String({ format: 'date-time', description: 'Session end: 60 minutes after creation, fixed.' }),
  limits: t.Object({
    requests: t.Integer({ description: 'Requests per window.' }),
    window_minutes: t.Number({ description: 'Window length in minutes.' }),
    session_minutes: t.Number({ description: 'Session lifetime in minutes.' }),
  }),
})
