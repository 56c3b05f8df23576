/**
 * @module Everything a request may need, built once from the app's dependencies. Entry files and
 * tests choose the driver, clock and configuration; nothing here knows the runtime.
 */
import type { Config } from './config'
import type { SqliteDriver } from './storage/driver'
import { limitSize, migrate } from './storage/migrations'
import { sessionStore } from './storage/sessions'
import { rateLimitStore } from './storage/rate-limits'
import { quoteStore } from './storage/quotes'
import { policyStore } from './storage/policies'
import { idempotencyStore } from './storage/idempotency'
import { sweeper } from './storage/sweep'
import { loadCatalogue } from './modules/plans/catalogue'
import { httpInsurer, type InsurerAdapter } from './modules/insurer/adapter'

export interface AppDeps {
  db: SqliteDriver
  config: Config
  /** Milliseconds since the epoch; tests pass a fake one. */
  clock?: () => number
  /** The socket's peer address for a request, where the runtime knows it. */
  peerAddress?: (request: Request) => string | undefined
  /** Where the one-line-per-request JSON log goes. */
  log?: (line: string) => void
  /** The insurer behind the UAT gateway; by default built from `config.uat` (none when unset). */
  insurer?: InsurerAdapter | null
}

export function createServices(deps: AppDeps) {
  const { db, config } = deps
  migrate(db)
  const withHeadroom = limitSize(db, config.dbMaxMegabytes)
  const clock = deps.clock ?? Date.now
  const log = deps.log ?? ((line: string) => console.log(line))
  const catalogue = loadCatalogue()
  const insurer = deps.insurer !== undefined ? deps.insurer : config.uat && httpInsurer(config.uat, catalogue, { clock, log })
  return {
    db,
    config,
    clock,
    peerAddress: deps.peerAddress ?? (() => undefined),
    log,
    catalogue,
    insurer,
    sessions: sessionStore(db),
    rates: rateLimitStore(db, { limit: config.rateLimit, windowMs: config.rateWindowSeconds * 1000 }),
    quotes: quoteStore(db),
    policies: policyStore(db),
    idempotency: idempotencyStore(db),
    sweeper: sweeper(db, config.rateWindowSeconds * 1000, withHeadroom),
  }
}

export type Services = ReturnType<typeof createServices>
