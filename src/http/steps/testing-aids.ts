/**
 * @module The testing aids of an admitted call, once it is counted and before its body is read:
 * `Sandbox-Delay-Ms` (http/delay.ts), which holds the answer, a forced failure's too; then
 * `Sandbox-Outcome` (http/forced-outcome.ts), which answers a forced failure at once.
 */
import { Elysia } from 'elysia'
import type { Config } from '../../config'
import { DELAY_HEADER, delayAnswer, requestedDelay } from '../delay'
import { FORCED_OUTCOME_HEADER, forcedFailure } from '../forced-outcome'
import { maybeStateOf, stateOf } from '../request-state'
import { SESSION_COOKIE, setSessionCookie } from '../session-cookie'

export function testingAids(config: Config) {
  return (
    new Elysia({ name: 'sandbox-testing-aids' })
      .onTransform({ as: 'global' }, ({ request, route, cookie }) => {
        const state = stateOf(request)
        state.delayMs = requestedDelay(request.headers.get(DELAY_HEADER))
        const forced = forcedFailure(request.headers.get(FORCED_OUTCOME_HEADER), route, state.rate!, state.admittedAt, config)
        if (forced?.code === 'session_expired') {
          setSessionCookie(cookie[SESSION_COOKIE]!, request, config, null, 0)
          state.session = null // as a real expiry answers: the call belongs to no session
        }
        if (forced) throw forced
      })
      // A failure's answer waits in the error answer (error-answer.ts).
      .onAfterHandle({ as: 'global' }, async ({ request }) => {
        const state = maybeStateOf(request)
        if (state) await delayAnswer(state.delayMs, request.signal)
      })
  )
}
