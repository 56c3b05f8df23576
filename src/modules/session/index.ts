/** @module Route: `POST /api/sandbox/session` creates a fresh anonymous session. */
import { Elysia } from 'elysia'
import { success } from '../../http/envelope'
import { PATHS } from '../../http/paths'
import { responses } from '../../http/envelope-model'
import { outcomeHeaders } from '../../http/headers-model'
import type { Services } from '../services'
import type { SessionAdmission } from '../../http/steps/admission'
import { SESSION_COOKIE, setSessionCookie } from '../../http/session-cookie'
import { SessionBody, SessionData } from './model'
import { mintSession } from '../../domain/session-token'
import { lifetimeSeconds, sessionPayload } from './service'
import { consoleLink } from '../../http/console-link'

export function sessionRoutes(admission: SessionAdmission, services: Services) {
  const { storage, config } = services
  return new Elysia({ name: 'session-routes' }).use(admission).post(
    PATHS.session,
    async ({ sandbox, cookie, request, body }) => {
      // Only now, with every check passed: a failed call keeps the caller's session and cookie.
      // Explicit creation ignores any cookie sent.
      const now = sandbox.admittedAt
      const lifetime = lifetimeSeconds(config, body.lifetime_minutes)
      const minted = mintSession(now, lifetime)
      sandbox.session = await storage.openSession(minted, now)
      sandbox.sessionToken = minted.token
      setSessionCookie(cookie[SESSION_COOKIE]!, request, config, minted.token, lifetime)
      const { console_url } = consoleLink(request, config.trustProxy, sandbox.session, minted.tokenHash)
      return success(sandbox, { ...sessionPayload(sandbox.session, config, lifetime), console_url })
    },
    {
      body: SessionBody,
      headers: outcomeHeaders(PATHS.session),
      response: responses(SessionData, []),
      detail: {
        summary: 'Create a session',
        description:
          'Always opens a fresh anonymous session and sets the `sbx_session` cookie. ' +
          'Send `{"lifetime_minutes": 1}` for a session that ends in a minute, to test `session_expired` handling.',
      },
    },
  )
}
