/** @module The last step of every sandbox call: its line in the structured log (src/log.ts), with no caller text in it. */
import { Elysia } from 'elysia'
import type { Log } from '../../log'
import { loggedMethod, loggedPath, pathOf } from '../paths'
import { maybeStateOf } from '../request-state'

export function accessLog(log: Log) {
  return new Elysia({ name: 'sandbox-access-log' }).onAfterResponse({ as: 'global' }, ({ request, set }) => {
    const state = maybeStateOf(request)
    if (!state) return
    log({
      request_id: state.requestId,
      method: loggedMethod(request.method),
      path: loggedPath(pathOf(request.url)),
      status: set.status ?? 200,
      duration_ms: Math.round((performance.now() - state.startedAt) * 100) / 100,
      session_ref: state.session?.ref ?? null,
    })
  })
}
