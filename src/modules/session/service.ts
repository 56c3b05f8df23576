/**
 * @module Anonymous sessions: a lifetime fixed at creation, what creation answers, and work done
 * only while the session runs. A session's token and ref are minted in domain/session-token.ts.
 */
import type { Config } from '../../config'
import { isoTimestamp } from '../../domain/dates'
import { ApiError } from '../../errors'
import type { Storage, Stores } from '../../storage/storage'

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
