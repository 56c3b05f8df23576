/** @module Schemas of the console link. */
import { t } from 'elysia'

export const ConsoleLinkData = t.Object({
  console_url: t.String({
    description: "The session's console, at the address the call was sent to (behind a trusted proxy, the one it forwards): open it in a browser.",
  }),
  expires_at: t.String({ format: 'date-time', description: 'When the session, and so the link, ends.' }),
})
