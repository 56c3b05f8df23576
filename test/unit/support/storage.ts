/** The embedded storage on a driver of the test's choosing (by default a fresh in-memory one). */
import type { Config } from '../../../src/config'
import { openEmbedded } from '../../../src/storage/drivers/bun'
import type { SqliteDriver } from '../../../src/storage/sqlite/driver'
import { sqliteStorage } from '../../../src/storage/sqlite/engine'

export function embeddedStorage(config: Config, db: SqliteDriver = openEmbedded(':memory:')) {
  const storage = sqliteStorage(db, { rateLimit: config.rateLimit, rateWindowMs: config.rateWindowSeconds * 1000, maxMegabytes: config.dbMaxMegabytes })
  return { storage, db }
}

/** `storage` and `config` for createServices. */
export const withStorage = (config: Config) => ({ storage: embeddedStorage(config).storage, config })
