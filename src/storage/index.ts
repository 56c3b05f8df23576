/**
 * @module Opens the storage the configuration names: PostgreSQL when `SANDBOX_DATABASE_URL` is set,
 * else the embedded SQLite file, through the driver the runtime's entry hands in.
 */
import type { SqliteConnection } from './sqlite/connection'
import { sqliteStorage } from './sqlite/engine'
import { ownFile } from './sqlite/ownership'
import { postgresStorage } from './postgres/engine'
import type { Storage } from './storage'

export type { Storage } from './storage'
export { FileInUse } from './sqlite/ownership'

/** What the storage needs of the configuration (config.ts, a layer above, names these the same). */
export interface StorageConfig {
  dbPath: string
  dbMaxMegabytes: number
  databaseUrl: string | null
  rateLimit: number
  rateWindowSeconds: number
}

/** Opens a file of the embedded database: its data, or the lock that keeps it to one process (sqlite/ownership.ts). */
export type OpenEmbedded = (path: string, role: 'data' | 'lock') => SqliteConnection

export async function openStorage(config: StorageConfig, openEmbedded: OpenEmbedded): Promise<Storage> {
  const rates = { rateLimit: config.rateLimit, rateWindowMs: config.rateWindowSeconds * 1000 }
  if (config.databaseUrl) return postgresStorage(config.databaseUrl, rates)
  if (config.dbPath === ':memory:') return sqliteStorage(openEmbedded(config.dbPath, 'data'), { ...rates, maxMegabytes: config.dbMaxMegabytes })
  const lock = ownFile(config.dbPath, (path) => openEmbedded(path, 'lock'))
  try {
    const storage = await sqliteStorage(openEmbedded(config.dbPath, 'data'), { ...rates, maxMegabytes: config.dbMaxMegabytes })
    return { ...storage, close: () => storage.close().finally(() => lock.close()) }
  } catch (error) {
    lock.close()
    throw error
  }
}

/** Where the data lives, for the start-up log line: never the URL's password. */
export function describeStorage(config: StorageConfig): string {
  if (!config.databaseUrl) return config.dbPath
  const url = new URL(config.databaseUrl)
  return `${url.protocol}//${url.host}${url.pathname}`
}
