/**
 * @module Anonymous sessions: an opaque cookie token (only its hash is stored), a public `sbx_` ref,
 * and a lifetime fixed at creation.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Config } from '../../config'
import { isoTimestamp } from '../../domain/dates'
import { ApiError } from '../../errors'
import type { NewSession, Storage, Stores } from '../../storage/storage'

/** 256 random bits for the cookie; a separate 80-bit public ref that cannot be turned into it. */
export function mintSession(now: number, lifetimeSeconds: number): NewSession & { token: string } {
  const token = randomBytes(32).toString('base64url')
  return { token, tokenHash: hashToken(token), ref: `sbx_${randomBytes(10).toString('hex')}`, expiresAt: now + lifetimeSeconds * 1000 }
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

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
 * The lifetime of a session created explicitly: the configured one, or the shorter one asked for
 * (a partner testing expiry); never longer than configured.
 */
export function lifetimeSeconds(config: Config, lifetimeMinutes: number | undefined): number {
  return lifetimeMinutes === undefined ? config.sessionTtlSeconds : Math.min(lifetimeMinutes * 60, config.sessionTtlSeconds)
}

/** `data` of `POST /api/sandbox/session` (spec 2.2): the configured limits and this session's lifetime. */
export function sessionPayload(session: { ref: string; expiresAt: number }, config: Config, lifetime: number) {
  return {
    session_ref: session.ref,
    expires_at: isoTimestamp(session.expiresAt),
    limits: {
      requests: config.rateLimit,
      window_minutes: config.rateWindowSeconds / 60,
      session_minutes: lifetime / 60,
    },
  }
}

/**
 * Runs `work` in one transaction, after checking there that the session still runs: a session that
 * ended while its request was in flight (a slow insurer, a sweep) gets `session_expired` and
 * nothing written. The check holds the session against the sweep until the transaction ends. As in
 * any transaction (storage.ts, `transaction`), `work` awaits only the stores it is given.
 */
export function inLiveSession<T>(storage: Storage, sessionId: number, now: number, work: (stores: Stores) => Promise<T>): Promise<T> {
  return storage.transaction(async (stores) => {
    if (!(await stores.sessions.isLive(sessionId, now))) throw sessionEnded()
    return work(stores)
  })
}

export const sessionEnded = () => new ApiError('session_expired', { variant: 'endedInFlight' })
