/**
 * @module A session's identity: an opaque token for the cookie (only its hash is stored) and a
 * public `sbx_` ref that cannot be turned into it. Minted by the admission step (a session created
 * on the way) and by the session route (one created on purpose).
 */
import { createHash, randomBytes } from 'node:crypto'

/** A new session as the storage opens it (its `NewSession`), with the token its cookie carries. */
export interface MintedSession {
  token: string
  tokenHash: string
  ref: string
  expiresAt: number
}

/** 256 random bits for the cookie; a separate 80-bit public ref that cannot be turned into it. */
export function mintSession(now: number, lifetimeSeconds: number): MintedSession {
  const token = randomBytes(32).toString('base64url')
  return { token, tokenHash: hashToken(token), ref: `sbx_${randomBytes(10).toString('hex')}`, expiresAt: now + lifetimeSeconds * 1000 }
}

/**
 * The session's console token: derived from its cookie's token, so asking again gives the same link,
 * and one-way, so the link never leads back to the token that calls the API.
 */
export function consoleToken(sessionToken: string): string {
  return createHash('sha256').update(`console:${sessionToken}`).digest('base64url')
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}
