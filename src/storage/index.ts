/**
 * @module Opens the storage the configuration names: PostgreSQL when `SANDBOX_DATABASE_URL` is set,
 * else the embedded SQLite file, through the driver the runtime's entry hands in.
 */
import type { SqliteConnection } from './drivers/connection'
import { sqliteStorage } from './sqlite/engine'
import { postgresStorage } from './postgres/engine'
import type { Storage } from './storage'

export type { Storage } from './storage'
/** What a runtime's adapter (storage/drivers/) opens: a connection to the embedded file. */
export type { SqliteConnection as EmbeddedConnection } from './drivers/connection'

/** What the storage needs of the configuration (config.ts, a layer above, names these the same). */
export interface StorageConfig {
  dbPath: string
  dbMaxMegabytes: number
  databaseUrl: string | null
  rateLimit: number
  rateWindowSeconds: number
}

export async function openStorage(config: StorageConfig, openEmbedded: (path: string) => SqliteConnection): Promise<Storage> {
  const rates = { rateLimit: config.rateLimit, rateWindowMs: config.rateWindowSeconds * 1000 }
  if (config.databaseUrl) return postgresStorage(config.databaseUrl, rates)
  return sqliteStorage(openEmbedded(config.dbPath), { ...rates, maxMegabytes: config.dbMaxMegabytes })
}

/** Where the data lives, for the start-up log line: never the URL's password. */
export function describeStorage(config: StorageConfig): string {
  if (!config.databaseUrl) return config.dbPath
  const url = new URL(config.databaseUrl)
  return `${url.protocol}//${url.host}${url.pathname}`
}
