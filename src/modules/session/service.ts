/**
 * @module Anonymous sessions: an opaque cookie token (only its hash is stored), a public `sbx_` ref,
 * and a lifetime fixed at creation.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Config } from '../../config'
import { isoTimestamp } from '../../domain/dates'
import type { SessionRow, SessionStore } from '../../storage/sessions'

export const SESSION_COOKIE = 'sbx_session'

export interface NewSession {
  token: string
  ref: string
  tokenHash: string
}

/** 256 random bits for the cookie; a separate 80-bit public ref that cannot be turned into it. */
export function mintSession(): NewSession {
  const token = randomBytes(32).toString('base64url')
  return { token, tokenHash: hashToken(token), ref: `sbx_${randomBytes(10).toString('hex')}` }
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

export type CookieSession = { kind: 'none' } | { kind: 'expired' } | { kind: 'live'; session: SessionRow }

/** What a cookie value names. An unknown or malformed token is treated as no cookie. */
export function lookupSession(store: SessionStore, token: unknown, now: number): CookieSession {
  if (typeof token !== 'string' || token.length === 0 || token.length > 128) return { kind: 'none' }
  const session = store.findByTokenHash(hashToken(token))
  if (!session) return { kind: 'none' }
  return session.expiresAt > now ? { kind: 'live', session } : { kind: 'expired' }
}

/** `data` of `POST /api/sandbox/session` (spec 2.2), reporting the configured limits. */
export function sessionPayload(session: { ref: string; expiresAt: number }, config: Config) {
  return {
    session_ref: session.ref,
    expires_at: isoTimestamp(session.expiresAt),
    limits: {
      requests: config.rateLimit,
      window_minutes: config.rateWindowSeconds / 60,
      session_minutes: config.sessionTtlSeconds / 60,
    },
  }
}
