/**
 * @module Routes: `POST /api/sandbox/console` (a sandbox call: the session's console link) and
 * `GET /api/sandbox/console/{token}/data` (what the console shows, as JSON: no cookie, no session
 * allowance). The page itself is not built yet (issue 35).
 */
import { Elysia } from 'elysia'
import { success } from '../../http/envelope'
import { NoFields, responses } from '../../http/envelope-model'
import { outcomeHeaders } from '../../http/headers-model'
import { PATHS } from '../../http/paths'
import type { SessionAdmission } from '../../http/steps/admission'
import type { Services } from '../services'
import { ConsoleLinkData } from './model'
import { CONSOLE_PATH, consoleData, openConsole } from './service'

/** Before the request's steps, as the documentation is: a browser brings no session cookie. */
export function consoleDataRoutes(services: Services) {
  return new Elysia({ name: 'console-data' }).get(`${CONSOLE_PATH}/:token/data`, async ({ params }) => {
    const data = await consoleData(services, params.token)
    const headers = { 'content-type': 'application/json', 'cache-control': 'no-store' }
    if (!data) return new Response(JSON.stringify({ error: 'no live session has this console link' }), { status: 404, headers })
    return new Response(JSON.stringify(data), { headers })
  })
}

export function consoleRoutes(admission: SessionAdmission, services: Services) {
  return new Elysia({ name: 'console-routes' })
    .use(admission)
    .post(PATHS.console, async ({ sandbox }) => success(sandbox, await openConsole(services, sandbox.session!, sandbox.sessionToken!)), {
      body: NoFields,
      headers: outcomeHeaders(PATHS.console),
      response: responses(ConsoleLinkData, []),
      detail: {
        summary: "This session's console link",
        description:
          "A read-only page of this session's policies, events and calls, for a person in a browser: print it when a test fails. " +
          'The same link each time; valid while the session lives; it cannot call the API.',
      },
    })
}
