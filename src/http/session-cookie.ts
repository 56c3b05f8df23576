/** @module The session cookie (`sbx_session`) and the contract's attributes for it. */
import type { Cookie } from 'elysia'
import type { Config } from '../config'
import { TOMBSTONE_MS } from '../domain/session-tombstone'
import { addressedToLoopback, arrivedOverHttps } from './client-address'

export const SESSION_COOKIE = 'sbx_session'

/**
 * The token a cookie value carries, or null for a value that could not be one (treated as no
 * cookie). In double quotes it is the same token: RFC 6265 allows them, and Java's CookieManager
 * quotes every cookie whose Set-Cookie has a Max-Age (it takes it for an RFC 2965 cookie).
 */
export function tokenOf(value: unknown): string | null {
  if (typeof value !== 'string') return null
  const token = value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value
  return token.length === 0 || token.length > 128 ? null : token
}

/**
 * Sets (or, with no token, clears) the session cookie with the contract's attributes. The cookie
 * outlives the session by the time its expired token is still recognised: a client that honours
 * `Max-Age` sends it after the session ends and is told `session_expired`, instead of silently
 * getting a new session whose lookups all answer "not found".
 */
export function setSessionCookie(cookie: Cookie<unknown>, request: Request, config: Config, token: string | null, lifetimeSeconds: number) {
  const https = arrivedOverHttps(request, config.trustProxy)
  // With CORS on, a tool on another site must get the cookie back: `SameSite=None`, which browsers
  // take only with `Secure`, and take that only over HTTPS or from a loopback host.
  const crossSite = config.corsOrigins.length > 0 && (https || addressedToLoopback(request))
  cookie.set({
    value: token ?? '',
    maxAge: token ? lifetimeSeconds + TOMBSTONE_MS / 1000 : 0,
    httpOnly: true,
    sameSite: crossSite ? 'none' : 'strict',
    path: '/',
    secure: https || crossSite,
  })
}
