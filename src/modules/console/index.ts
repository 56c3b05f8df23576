/**
 * @module Routes: `POST /api/sandbox/console` (a sandbox call: the session's console link) and
 * `GET /api/sandbox/console/{token}/data` (what the console shows, as JSON: no cookie, no session
 * allowance), the page that shows it (`GET /api/sandbox/console/{token}`) and the page's two files.
 */
import { Elysia } from 'elysia'
import { success } from '../../http/envelope'
import { NoFields, responses } from '../../http/envelope-model'
import { outcomeHeaders } from '../../http/headers-model'
import { PATHS } from '../../http/paths'
import { networkKey } from '../../http/client-address'
import type { PeerAddress } from '../../http/steps/request-start'
import type { SessionAdmission } from '../../http/steps/admission'
import type { Services } from '../services'
import { ConsoleLinkData } from './model'
import { CONSOLE_ASSETS, CONSOLE_CSP, consolePage, consoleScript, consoleStyle } from './page'
import { consoleData } from './service'
import { consoleLink } from '../../http/console-link'
import { staticAsset } from '../../http/static-asset'
import { hashToken } from '../../domain/session-token'

const HIDDEN = { detail: { hide: true } }

/**
 * The console's own fair use, per network and per process: a page polls every 2 s (30 a minute), so
 * a few tabs fit; it never uses the session's allowance. Kept in memory: a restart forgets it.
 */
export const CONSOLE_VIEWS_PER_MINUTE = 120

/** Networks whose windows are kept at most: past it the oldest windows are forgotten (memory stays bounded). */
const NETWORKS_KEPT = 50_000

function consoleAllowance() {
  // In the order the windows started (a new one is set at the end), so ended ones come first.
  const windows = new Map<string, { start: number; used: number }>()
  return (network: string, now: number): number | null => {
    for (const [key, window] of windows) {
      if (now - window.start < 60_000 && windows.size <= NETWORKS_KEPT) break
      windows.delete(key)
    }
    const window = windows.get(network)
    if (!window) {
      windows.set(network, { start: now, used: 1 })
      return null
    }
    if (window.used >= CONSOLE_VIEWS_PER_MINUTE) return Math.ceil((window.start + 60_000 - now) / 1000)
    window.used += 1
    return null
  }
}

const asset = (body: string, type: string) => staticAsset(body, type, 3600)

/** Before the request's steps, as the documentation is: a browser brings no session cookie. */
export function consoleDataRoutes(services: Services, peerAddress: PeerAddress) {
  const allowance = consoleAllowance()
  return new Elysia({ name: 'console-data' })
    .onBeforeHandle(({ request, server }) => {
      const retryAfter = allowance(
        networkKey(request, () => peerAddress(request, server ?? null), services.config.trustProxy),
        services.clock(),
      )
      if (retryAfter === null) return
      return new Response(JSON.stringify({ error: `at most ${CONSOLE_VIEWS_PER_MINUTE} console views a minute per network` }), {
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after': String(retryAfter), 'cache-control': 'no-store' },
      })
    })
    .get(`${CONSOLE_ASSETS}/console.js`, asset(consoleScript, 'text/javascript'), HIDDEN)
    .get(`${CONSOLE_ASSETS}/console.css`, asset(consoleStyle, 'text/css'), HIDDEN)
    .get(
      `${PATHS.console}/:token`,
      () =>
        new Response(consolePage, {
          headers: {
            'content-type': 'text/html; charset=utf-8',
            'cache-control': 'no-store',
            'content-security-policy': CONSOLE_CSP,
            'referrer-policy': 'no-referrer',
            'x-content-type-options': 'nosniff',
          },
        }),
      HIDDEN,
    )
    .get(
      `${PATHS.console}/:token/data`,
      async ({ params }) => {
        const data = await consoleData(services, params.token)
        const headers = { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }
        if (!data) return new Response(JSON.stringify({ error: 'no live session has this console link' }), { status: 404, headers })
        return new Response(JSON.stringify(data), { headers })
      },
      HIDDEN,
    )
}

export function consoleRoutes(admission: SessionAdmission, services: Services) {
  return new Elysia({ name: 'console-routes' })
    .use(admission)
    .post(
      PATHS.console,
      ({ sandbox, request }) => success(sandbox, consoleLink(request, services.config.trustProxy, sandbox.session!, hashToken(sandbox.sessionToken!))),
      {
        body: NoFields,
        headers: outcomeHeaders(PATHS.console),
        response: responses(ConsoleLinkData, []),
        detail: {
          summary: "This session's console link",
          description:
            "A read-only page of this session's policies, events and calls, for a person in a browser: print it when a test fails. " +
            'The same link each time; valid while the session lives; it cannot call the API.',
        },
      },
    )
}
