/**
 * @module A session's identity: an opaque token for the cookie (only its hash is stored) and a
 * public `sbx_` ref that cannot be turned into it. Minted by the admission step (a session created
 * on the way) and by the session route (one created on purpose).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

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
 * The session's console token: its public ref, and a proof derived one way from its cookie token's
 * hash. Nothing is stored for it: the same link each time, found by the ref and checked against the
 * stored hash; and it never leads back to the token that calls the API.
 */
export function consoleToken(ref: string, tokenHash: string): string {
  return `${ref}.${consoleProof(tokenHash)}`
}

/** Whether `token` is the console token of the session with this ref and token hash. */
export function isConsoleToken(token: string, ref: string, tokenHash: string): boolean {
  const expected = Buffer.from(consoleToken(ref, tokenHash))
  const given = Buffer.from(token)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** The ref a console token names, or undefined when it is not one's shape. */
export function consoleTokenRef(token: string): string | undefined {
  return /^(sbx_[0-9a-f]{20})\.[A-Za-z0-9_-]{43}$/.exec(token)?.[1]
}

function consoleProof(tokenHash: string): string {
  return createHash('sha256').update(`console:${tokenHash}`).digest('base64url')
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}
