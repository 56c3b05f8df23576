/**
 * @module Builds the sandbox app from its services (storage, configuration, clock, catalogue).
 * Entry files create those and listen; tests build the app in-process.
 */
import { Elysia, type ElysiaAdapter } from 'elysia'
import { healthRoutes } from './http/health'
import { corsPolicy } from './http/cors'
import { bodyReader, createPipeline } from './http/pipeline'
import { docsRoutes } from './modules/docs'
import { eventRoutes } from './modules/events'
import { planRoutes } from './modules/plans'
import { policyRoutes } from './modules/policies'
import { sessionRoutes } from './modules/session'
import { sessionGuard } from './modules/session/guard'
import type { Services } from './services'
import { version } from '../package.json'

export interface AppOptions {
  /** Elysia's adapter for runtimes other than Bun (`@elysiajs/node`). */
  adapter?: ElysiaAdapter
}

/** The Elysia settings every sandbox app is built with (also the benchmark's cost ladder). */
export function appSettings(options: AppOptions = {}) {
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
    ...(options.adapter && { adapter: options.adapter }),
  } as const
}

export function createApp(services: Services, options: AppOptions = {}) {
  const pipeline = createPipeline(services)
  const guard = sessionGuard(services)
  // Health and docs come before the pipeline: they count against no allowance and need no session.
  return new Elysia(appSettings(options))
    .use(healthRoutes(services.storage))
    .use(docsRoutes(version, services))
    .use(pipeline)
    .use(corsPolicy(services.config.corsOrigins))
    .use(guard)
    .use(bodyReader)
    .use(sessionRoutes(guard, services))
    .use(planRoutes(guard, services))
    .use(policyRoutes(guard, services))
    .use(eventRoutes(guard, services))
}

/** The app's type, for an Eden Treaty client: `treaty<App>(baseUrl)`. */
export type App = ReturnType<typeof createApp>
