/**
 * @module Builds the sandbox app from its services (database, configuration, clock, catalogue).
 * Entry files create those and listen; tests build the app in-process.
 */
import { Elysia, type ElysiaAdapter } from 'elysia'
import { docsRoutes } from './http/docs'
import { healthRoutes } from './http/health'
import { createPipeline } from './http/pipeline'
import { planRoutes } from './modules/plans'
import { policyRoutes } from './modules/policies'
import { sessionRoutes } from './modules/session'
import type { Services } from './services'
import { version } from '../package.json'

export interface AppOptions {
  /** Elysia's adapter for runtimes other than Bun (`@elysiajs/node`). */
  adapter?: ElysiaAdapter
}

export function createApp(services: Services, options: AppOptions = {}) {
  const pipeline = createPipeline(services)
  // Health and docs come before the pipeline: they count against no allowance and need no session.
  return new Elysia({
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
  })
    .use(healthRoutes(services))
    .use(docsRoutes(version))
    .use(pipeline)
    .use(sessionRoutes(pipeline, services))
    .use(planRoutes(pipeline, services))
    .use(policyRoutes(pipeline, services))
}

/** The app's type, for an Eden Treaty client: `treaty<App>(baseUrl)`. */
export type App = ReturnType<typeof createApp>
