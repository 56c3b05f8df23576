/**
 * @module The console of a session: a read-only view a person opens in a browser (a partner's
 * server holds the session cookie, not their browser). Its link carries the session's ref and a
 * proof derived from its token (domain/session-token.ts): the same link each time it is asked for,
 * valid while the session lives, and never usable to call the API.
 */
import { consoleTokenRef, isConsoleToken } from '../../domain/session-token'
import { isoTimestamp } from '../../domain/dates'
import { clockView } from '../../domain/session-clock'
import { listEvents } from '../events/service'
import { listPolicies } from '../policies/list'
import { listCalls } from '../request-log/service'
import type { Services } from '../services'

/** What the console shows of the session whose console token this is; undefined for no live session. */
export async function consoleData(services: Services, token: string) {
  const now = services.clock()
  const ref = consoleTokenRef(token)
  const session = ref === undefined ? undefined : await services.storage.sessions.byRef(ref, now)
  if (!session || !isConsoleToken(token, session.ref, session.tokenHash)) return undefined
  const [policies, events, calls] = await Promise.all([
    listPolicies(services, session, { limit: 100 }),
    listEvents(services, session, { limit: 100 }),
    listCalls(services, session, { limit: 100 }),
  ])
  return {
    session_ref: session.ref,
    expires_at: isoTimestamp(session.expiresAt),
    clock: clockView(now, session.clockOffsetMs),
    policies: policies.policies,
    events: events.events,
    calls: calls.calls,
  }
}
