/**
 * @module The session guard: every sandbox call's admission, in one place. It reads the cookie,
 * refuses an expired session, admits the request against the session's and the network's
 * allowance, counts it, and creates the session when the call brings none — one storage call, one
 * transaction. A `Sandbox-Outcome` header is answered right after (http/forced-outcome.ts), so a
 * forced failure counts like any other call. Explicit creation (`POST /api/sandbox/session`) is counted against the network only;
 * its route creates the session once the call has passed its checks, so a failed call leaves the
 * caller's session and cookie as they were.
 */
import { Elysia, type Cookie } from 'elysia'
import type { Config } from '../../config'
import { ApiError, FAILURE_MESSAGE } from '../../errors'
import { addressedToLoopback, arrivedOverHttps, networkKey } from '../../http/client-address'
import { FORCED_OUTCOME_HEADER, forcedFailure } from '../../http/forced-outcome'
import { DELAY_HEADER, requestedDelay } from '../../http/delay'
import { rateLimitHeaders } from '../../http/envelope'
import { fairUseMessage } from '../../domain/rate-window'
import { PATHS } from '../../http/paths'
import { stateOf } from '../../http/pipeline'
import type { Services } from '../../services'
import type { SessionRow } from '../../storage/storage'
import { TOMBSTONE_MS } from '../../storage/sweep'
import { SESSION_COOKIE, mintSession, tokenHashOf } from './service'

type SessionCookie = Cookie<unknown>

/**
 * Sets (or, with no token, clears) the session cookie with the contract's attributes. The cookie
 * outlives the session by the time its expired token is still recognised: a client that honours
 * `Max-Age` sends it after the session ends and is told `session_expired`, instead of silently
 * getting a new session whose lookups all answer "not found".
 */
export function setSessionCookie(cookie: SessionCookie, request: Request, config: Config, token: string | null, lifetimeSeconds: number) {
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

export function sessionGuard(services: Pick<Services, 'config' | 'clock' | 'storage' | 'peerAddress'>) {
  const { config, clock, storage } = services

  return new Elysia({ name: 'session-guard' })
    .derive({ as: 'global' }, async ({ request, cookie, route, set }) => {
      const state = stateOf(request)
      const now = (state.admittedAt = clock())
      const explicit = route === PATHS.session
      const sessionCookie = cookie[SESSION_COOKIE]!
      let minted: ReturnType<typeof mintSession> | null = null
      const admission = await storage.admit({
        tokenHash: explicit ? null : tokenHashOf(sessionCookie.value),
        network: networkKey(request, services.peerAddress(request), config.trustProxy),
        now,
        // Minted only when the storage creates a session: a live cookie needs no new token.
        create: explicit ? null : () => (minted = mintSession(now, config.sessionTtlSeconds)),
      })
      if (admission.kind === 'expired') {
        setSessionCookie(sessionCookie, request, config, null, 0)
        throw new ApiError('session_expired', FAILURE_MESSAGE.session_expired)
      }
      state.session = admission.session
      state.rate = admission.status
      Object.assign(set.headers, rateLimitHeaders(admission.status, config.rateWindowSeconds, now))
      if (admission.kind === 'refused') {
        const { status } = admission
        throw new ApiError('rate_limited', fairUseMessage(status.limit, config.rateWindowSeconds), undefined, status.retryAfter)
      }
      const fresh = minted as ReturnType<typeof mintSession> | null // set by the storage's call, which TypeScript cannot see
      if (admission.created && fresh) setSessionCookie(sessionCookie, request, config, fresh.token, config.sessionTtlSeconds)
      state.sessionToken = admission.created ? fresh!.token : admission.session && String(sessionCookie.value)
      // Testing aids, once admitted and counted, with nothing read or written yet: Sandbox-Delay-Ms
      // (http/delay.ts), which a forced failure waits for too, then Sandbox-Outcome (http/forced-outcome.ts).
      state.delayMs = requestedDelay(request.headers.get(DELAY_HEADER))
      const forced = forcedFailure(request.headers.get(FORCED_OUTCOME_HEADER), route, admission.status, now, config)
      if (forced?.code === 'session_expired') {
        setSessionCookie(sessionCookie, request, config, null, 0)
        state.session = null // as a real expiry answers: the call belongs to no session
      }
      if (forced) throw forced
      return { sandbox: state as typeof state & { session: SessionRow | null } }
    })
}

export type SessionGuard = ReturnType<typeof sessionGuard>
