/**
 * @module The last step of every sandbox call: its line in the structured log (src/log.ts), with no
 * caller text in it, and its entry in the session's request log (http/call-record.ts), written behind.
 */
import { Elysia } from 'elysia'
import type { Log } from '../../log'
import type { Storage } from '../../storage/storage'
import { callRecord } from '../call-record'
import { loggedMethod, loggedPath, pathOf, UNLOGGED_ROUTES } from '../paths'
import { maybeStateOf } from '../request-state'

export function accessLog(log: Log, storage: Pick<Storage, 'logCall'>) {
  return new Elysia({ name: 'sandbox-access-log' }).onAfterResponse({ as: 'global' }, ({ request, set, route }) => {
    const state = maybeStateOf(request)
    if (!state) return
    const status = typeof set.status === 'number' ? set.status : 200
    const answered = { path: loggedPath(pathOf(request.url)), status, durationMs: Math.round((performance.now() - state.startedAt) * 100) / 100 }
    log({
      request_id: state.requestId,
      method: loggedMethod(request.method),
      path: answered.path,
      status: set.status ?? 200,
      duration_ms: answered.durationMs,
      session_ref: state.session?.ref ?? null,
    })
    if (UNLOGGED_ROUTES.has(route)) return
    const call = callRecord(state, request, answered, set.headers as Record<string, unknown>)
    if (call) storage.logCall(call)
  })
}
