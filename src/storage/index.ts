/**
 * @module Opens the storage the configuration names: PostgreSQL when `SANDBOX_DATABASE_URL` is set,
 * else the embedded SQLite file, through the driver the runtime's entry hands in.
 */
import type { Config } from '../config'
import type { SqliteDriver } from './sqlite/driver'
import { sqliteStorage } from './sqlite/engine'
import { postgresStorage } from './postgres/engine'
import type { Storage } from './storage'

export type { Storage } from './storage'
export type { SqliteDriver as EmbeddedDriver } from './sqlite/driver'

/** What the storage needs of the configuration. */
type StorageConfig = Pick<Config, 'dbPath' | 'dbMaxMegabytes' | 'databaseUrl' | 'rateLimit' | 'rateWindowSeconds'>

export async function openStorage(config: StorageConfig, openEmbedded: (path: string) => SqliteDriver): Promise<Storage> {
  const rates = { rateLimit: config.rateLimit, rateWindowMs: config.rateWindowSeconds * 1000 }
  if (config.databaseUrl) return postgresStorage(config.databaseUrl, rates)
  return sqliteStorage(openEmbedded(config.dbPath), { ...rates, maxMegabytes: config.dbMaxMegabytes })
}

/** What is wrong with a value of `SANDBOX_DATABASE_URL`, or null when it names a database this build serves. */
export function databaseUrlProblem(raw: string): string | null {
  const url = URL.canParse(raw) ? new URL(raw) : null
  if (url && ['postgres:', 'postgresql:'].includes(url.protocol) && url.hostname) return null
  return 'must be a postgres://user:password@host:port/database URL'
}

/** Where the data lives, for the start-up log line: never the URL's password. */
export function describeStorage(config: StorageConfig): string {
  if (!config.databaseUrl) return config.dbPath
  const url = new URL(config.databaseUrl)
  return `${url.protocol}//${url.host}${url.pathname}`
}
