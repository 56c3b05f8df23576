/**
 * @module Everything the sandbox's routes may need, built once from the app's dependencies. Entry
 * files and tests choose the storage, clock and configuration; nothing here knows the runtime or
 * the engine.
 */
import type { Config } from '../config'
import { createLog, type Log } from '../log'
import type { Storage } from '../storage/storage'
import { loadCatalogue } from './plans/catalogue'
import { httpInsurer, type InsurerAdapter } from './insurer/adapter'
import { hostNames } from './events/host-names'

export interface AppDeps {
  storage: Storage
  config: Config
  /** Milliseconds since the epoch; by default the storage's clock (the database's, shared by every instance). */
  clock?: () => number
  /** Where the structured log goes (a JSON line per call, src/log.ts); stdout by default. */
  log?: Log
  /** The insurer behind the UAT gateway; by default built from `config.uat` (none when unset). */
  insurer?: InsurerAdapter | null
}

export function createServices(deps: AppDeps) {
  const { storage, config } = deps
  const clock = deps.clock ?? storage.clock
  const log = deps.log ?? createLog()
  const catalogue = loadCatalogue()
  const insurer = deps.insurer !== undefined ? deps.insurer : config.uat && httpInsurer(config.uat, catalogue, { clock, log })
  return {
    storage,
    config,
    clock,
    log,
    catalogue,
    insurer,
    /** Webhook host names, resolved for registrations and deliveries alike (one memory of failed names). */
    hostNames: hostNames(config.webhookTargets),
  }
}

export type Services = ReturnType<typeof createServices>
