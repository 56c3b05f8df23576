/**
 * @module The last step of every sandbox call: its line in the structured log (src/log.ts), with no
 * caller text in it, and its entry in the session's request log (http/call-record.ts), written behind.
 * The envelope is turned into JSON here, for the answer and the log alike.
 */
import { Elysia } from 'elysia'
import type { Log } from '../../log'
import type { Storage } from '../../storage/storage'
import { callRecord } from '../call-record'
import { loggedMethod, loggedPath, pathOf, UNLOGGED_ROUTES } from '../paths'
import { maybeStateOf } from '../request-state'

/**
 * `textAnswered`: the adapter answers a string a hook returns as its text, with the headers set
 * (Elysia's own, on Bun and Deno). @elysiajs/node answers one as text/plain, so there it is given the
 * envelope again and makes its own JSON of it, a second time.
 */
export function accessLog(log: Log, storage: Pick<Storage, 'logCall'>, { textAnswered }: { textAnswered: boolean }) {
  return new Elysia({ name: 'sandbox-access-log' })
    .mapResponse({ as: 'global' }, ({ request, response, set }) => {
      const state = maybeStateOf(request)
      // Anything but the envelope (a certificate, a page) goes on as it is: Elysia's error path
      // answers whatever this returns.
      if (state?.answer === undefined || response !== state.answer) return response as Response
      // As Elysia does for an object: a type a handler set stays.
      set.headers['content-type'] ??= 'application/json'
      const text = JSON.stringify(response)
      state.answerText = text
      // The hook's type names only a Response.
      return (textAnswered ? text : response) as Response
    })
    .onAfterResponse({ as: 'global' }, ({ request, set, route }) => {
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
