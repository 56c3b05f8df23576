/**
 * @module Admission in the embedded engine: session expiry, the rate check and the count, and a new
 * session, in memory and in one synchronous step (the file serves one process, ownership.ts), so
 * limits are exact by construction and no admission waits for a write (write-behind.ts).
 */
import type { Admission, AdmissionRequest, NewSession, SessionRow, Storage } from '../storage'
import type { Runner } from '../stores'
import type { RateWindows } from './rate-limits'
import type { SessionStore } from './sessions'

interface Parts {
  sessions: SessionStore
  rates: RateWindows
  /** Why the file takes no write, while it does not (write-behind.ts). */
  failure: () => Error | null
  /** A call in the connection's turn. */
  inTurn: Runner
}

export function memoryAdmission({ sessions, rates, failure, inTurn }: Parts): Pick<Storage, 'admit' | 'openSession' | 'allowance'> {
  /** New work is refused while the file takes no write: memory would hold it without bound. */
  function writable(): void {
    const why = failure()
    if (why) throw why
  }

  /** The session an admitted call creates, counted against its own key too. */
  function opened(fresh: NewSession, now: number) {
    writable()
    const session = sessions.create(fresh.ref, fresh.tokenHash, now, fresh.expiresAt)
    return { admitted: session, newKey: `s:${session.ref}` }
  }

  function admitFound({ network, now, create }: AdmissionRequest, found: SessionRow | undefined): Admission {
    if (found && found.expiresAt <= now) return { kind: 'expired' }
    const live = found ?? null
    const keys = live ? [`s:${live.ref}`, network] : [network]
    const { status, admitted } = rates.admit(keys, now, () => {
      if (live || !create) {
        writable()
        return { admitted: live }
      }
      return opened(create(), now)
    })
    if (admitted === undefined) return { kind: 'refused', status, session: live }
    return { kind: 'admitted', status, session: admitted, created: admitted !== live }
  }

  return {
    // Only a token memory does not know (expired before this process started, or unknown) is read from the file.
    admit: async (request) => {
      const { tokenHash, now } = request
      const found = tokenHash === null ? undefined : (sessions.cached(tokenHash) ?? (await inTurn(() => sessions.read(tokenHash, now))))
      return admitFound(request, found)
    },
    openSession: async (fresh, now) => rates.admit([], now, () => opened(fresh, now)).admitted!,
    allowance: async (keys, now) => rates.peek(keys, now),
  }
}
