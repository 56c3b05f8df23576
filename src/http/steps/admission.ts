/**
 * @module Admission, every sandbox call's: it reads the cookie, refuses an expired session, admits
 * the call against the session's and the network's allowance, counts it, and creates the session
 * when the call brings none — one storage call (the storage's `admit`: exact, and writing nothing
 * the call waits for on the embedded engine). Explicit creation
 * (`POST /api/sandbox/session`) is counted against the network only; its route creates the session
 * once the call has passed its checks, so a failed call leaves the caller's session and cookie as
 * they were.
 */
import { Elysia } from 'elysia'
import type { Config } from '../../config'
import { ApiError } from '../../errors'
import { rateLimitHeaders } from '../envelope'
import { PATHS } from '../paths'
import { stateOf } from '../request-state'
import { SESSION_COOKIE, setSessionCookie, tokenOf } from '../session-cookie'
import { hashToken, mintSession } from '../../domain/session-token'
import type { Storage } from '../../storage/storage'

export interface AdmissionDeps {
  config: Config
  clock: () => number
  storage: Pick<Storage, 'admit'>
}

export function sessionAdmission({ config, clock, storage }: AdmissionDeps) {
  return new Elysia({ name: 'session-admission' }).derive({ as: 'global' }, async ({ request, cookie, route, set }) => {
    const state = stateOf(request)
    const now = (state.admittedAt = clock())
    const explicit = route === PATHS.session
    const sessionCookie = cookie[SESSION_COOKIE]!
    // Read before a new session's cookie is set over it. An empty value is the cleared cookie that
    // a client copying Set-Cookie by hand sends back after session_expired: no cookie. Any other
    // value (garbled included) was sent as one, and is told it is not known rather than missing.
    const carriedCookie = sessionCookie.value !== undefined && sessionCookie.value !== ''
    const token = explicit ? null : tokenOf(sessionCookie.value)
    const minted: { token: string | null } = { token: null }
    const admission = await storage.admit({
      tokenHash: token === null ? null : hashToken(token),
      network: state.network,
      now,
      // Minted only when the storage creates a session: a live cookie needs no new token.
      create: explicit
        ? null
        : () => {
            const session = mintSession(now, config.sessionTtlSeconds)
            minted.token = session.token
            return session
          },
    })
    if (admission.kind === 'expired') {
      setSessionCookie(sessionCookie, request, config, null, 0)
      throw new ApiError('session_expired', { variant: 'ended' })
    }
    state.session = admission.session
    state.rate = admission.status
    Object.assign(set.headers, rateLimitHeaders(admission.status, config.rateWindowSeconds, now))
    if (admission.kind === 'refused') {
      const { status } = admission
      throw new ApiError('rate_limited', {
        values: { limit: status.limit, windowSeconds: config.rateWindowSeconds, byDefault: config.rateLimitByDefault },
        retryAfter: status.retryAfter,
      })
    }
    if (admission.created && minted.token) setSessionCookie(sessionCookie, request, config, minted.token, config.sessionTtlSeconds)
    state.implicitSession = admission.created && !explicit ? (carriedCookie ? 'unknown_cookie' : 'no_cookie') : null
    state.sessionToken = admission.created ? minted.token : admission.session && token
    return { sandbox: state }
  })
}

/** The admission step, which every route plugin uses for the `sandbox` it derives. */
export type SessionAdmission = ReturnType<typeof sessionAdmission>
