/** @module A session's console link (modules/console/), at the address the client used. */
import { isoTimestamp } from '../domain/dates'
import { consoleToken } from '../domain/session-token'
import { requestOrigin } from './client-address'
import { PATHS } from './paths'

/**
 * The link at the origin the call was sent to (behind trusted proxies, the forwarded one; relative
 * when the request named none). The same each time, and nothing is written for it
 * (domain/session-token.ts).
 */
export function consoleLink(request: Request, trustProxy: number, session: { ref: string; expiresAt: number }, tokenHash: string) {
  const origin = requestOrigin(request, trustProxy)
  const base = origin === '/' ? '' : origin
  return { console_url: `${base}${PATHS.console}/${consoleToken(session.ref, tokenHash)}`, expires_at: isoTimestamp(session.expiresAt) }
}
