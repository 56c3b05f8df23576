/**
 * @module The sandbox app: the table of contents of a request. Each step below is one plugin in
 * one file of http/steps/, listed in the order it runs for a call (spec 2 and CONTRACT.md's order:
 * route and method, session expiry, fair use, body, schema, handler). What a call carries from step
 * to step is its request state (http/request-state.ts). The entries (runtime/) create the services
 * and listen; tests build the app in-process.
 */
import { Elysia, type ElysiaAdapter } from 'elysia'
import { accessLog } from './http/steps/access-log'
import { corsPolicy } from './http/steps/cors'
import { errorAnswer } from './http/steps/error-answer'
import { healthRoutes } from './http/health'
import { bodyReader } from './http/steps/request-body'
import { requestStart, type PeerAddress } from './http/steps/request-start'
import { testingAids } from './http/steps/testing-aids'
import { docsRoutes } from './modules/docs'
import { eventRoutes } from './modules/events'
import { planRoutes } from './modules/plans'
import { policyRoutes } from './modules/policies'
import type { Services } from './modules/services'
import { requestLogRoutes } from './modules/request-log'
import { consoleDataRoutes, consoleRoutes } from './modules/console'
import { sessionRoutes } from './modules/session'
import { testHelperRoutes } from './modules/test-helpers'
import { sessionAdmission } from './http/steps/admission'
import { version } from '../package.json'

/** What the app needs to know of the runtime that serves it (runtime/bun, node or deno: server.ts). */
export interface RuntimeDescription {
  /** Elysia's adapter for runtimes other than Bun (`@elysiajs/node`). */
  adapter?: ElysiaAdapter
  /** The socket's peer address of a request, where the runtime knows it (the per-network allowance). */
  peerAddress?: PeerAddress
}

/** The Elysia settings every sandbox app is built with (also the benchmark's cost ladder). */
export function appSettings(runtime: RuntimeDescription = {}) {
  return {
    normalize: false,
    strictPath: true,
    // Elysia finds the path after the 11th character by default, which loses it for a host of 1 to 3
    // characters (`Host: api`). The entries serve plain HTTP (TLS ends at a proxy), so the path starts
    // after `http://`.
    handler: { standardHostname: false },
    // Answers are still checked against their schemas; nothing in them needs encoding (a tenth of a
    // plan search's time, measured by bench/run.ts).
    encodeSchema: false,
    ...(runtime.adapter && { adapter: runtime.adapter }),
  } as const
}

export function createApp(services: Services, runtime: RuntimeDescription = {}) {
  const { config, clock, storage, log } = services
  const admission = sessionAdmission(services)
  const mode = services.insurer ? 'uat_gateway' : 'simulation'
  return (
    new Elysia(appSettings(runtime))
      // Before every step: health and documentation need no session and count against no allowance.
      .use(healthRoutes(storage))
      .use(docsRoutes(version, services))
      .use(consoleDataRoutes(services, runtime.peerAddress ?? (() => undefined)))
      // 1. Request id, the headers every answer carries, the header budget, the caller's network.
      .use(requestStart({ config, clock, mode, peerAddress: runtime.peerAddress ?? (() => undefined) }))
      // Any step's failure, from here on, is answered as the error envelope (404 and 405 from the router too).
      .use(errorAnswer({ config, clock, storage, log }))
      // 2. CORS for the configured origins: preflights answered, credentialed answers readable.
      .use(corsPolicy(config.corsOrigins))
      // 3. Route and method: Elysia's router, between the request's hooks and its transforms.
      // 4. Admission: session expiry, the session's and the network's allowance, counting, a new session.
      .use(admission)
      // 5. Testing aids: Sandbox-Delay-Ms (the answer waits, after the handler), then Sandbox-Outcome.
      .use(testingAids(config))
      // 6. The body: size, media type, JSON, personal data.
      .use(bodyReader)
      // 7. The routes, added last of all below: each validates its body against its schema, then runs its handler.
      // 8. Once answered: the call's line in the log (added before the routes: a hook reaches only routes added after it).
      .use(accessLog(log, storage, { textAnswered: !runtime.adapter }))
      .use(sessionRoutes(admission, services))
      .use(planRoutes(admission, services))
      .use(policyRoutes(admission, services))
      .use(eventRoutes(admission, services))
      .use(testHelperRoutes(admission, services))
      .use(requestLogRoutes(admission, services))
      .use(consoleRoutes(admission, services))
  )
}

/** The app's type, for an Eden Treaty client: `treaty<App>(baseUrl)`. */
export type App = ReturnType<typeof createApp>
