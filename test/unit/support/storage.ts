/** The embedded storage and the SQLite engine's parts, as the unit tests open them. */
import { afterEach, beforeEach } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Config } from '../../../src/config'
import { openEmbedded } from '../../../src/runtime/bun/sqlite'
import type { SqliteConnection } from '../../../src/storage/sqlite/connection'
import { sqliteDriver } from '../../../src/storage/sqlite/driver'
import { sqliteStorage } from '../../../src/storage/sqlite/engine'
import { migrate } from '../../../src/storage/sqlite/migrations'
import { quoteStore } from '../../../src/storage/sqlite/quotes'
import { sessionStore } from '../../../src/storage/sqlite/sessions'
import type { PolicyRecord, Quote } from '../../../src/storage/storage'

/** The embedded storage on a connection of the test's choosing (by default a fresh in-memory one). */
export async function embeddedStorage(config: Config, db: SqliteConnection = openEmbedded(':memory:')) {
  const storage = await sqliteStorage(db, { rateLimit: config.rateLimit, rateWindowMs: config.rateWindowSeconds * 1000, maxMegabytes: config.dbMaxMegabytes })
  return { storage, db }
}

/** `storage` and `config` for createServices. */
export const withStorage = async (config: Config) => ({ storage: (await embeddedStorage(config)).storage, config })

/**
 * A migrated database file for each test of the calling file, in a temporary folder removed after
 * it: `path`, and `db`, a connection to it.
 */
export function fileForEachTest(prefix: string) {
  const current = { dir: '', path: '', db: undefined as unknown as SqliteConnection }
  beforeEach(async () => {
    current.dir = mkdtempSync(join(tmpdir(), prefix))
    current.path = join(current.dir, 'sandbox.db')
    current.db = openEmbedded(current.path)
    await migrated(current.db)
  })
  afterEach(() => {
    current.db.close()
    rmSync(current.dir, { recursive: true, force: true })
  })
  return current
}

/** Brings a connection's file up to the newest schema, as the engine does at start. */
export const migrated = (db: SqliteConnection) => migrate(sqliteDriver(db))

/** `work` in one transaction on `db`, for a test that seeds a file directly. */
export function committed(db: SqliteConnection, work: () => void): void {
  db.exec('BEGIN IMMEDIATE')
  try {
    work()
    db.exec('COMMIT')
  } catch (error) {
    db.exec('ROLLBACK')
    throw error
  }
}

/** A session written to the file, as the engine writes one behind. */
export function seedSession(db: SqliteConnection, ref: string, tokenHash: string, createdAt: number, expiresAt: number) {
  const sessions = sessionStore(db)
  const session = sessions.create(ref, tokenHash, createdAt, expiresAt)
  sessions.write(sessions.unwritten.take())
  return session
}

/** Quotes written to the file for a session, as the engine writes them behind. */
export function seedQuotes(db: SqliteConnection, sessionId: number, quotes: Quote[]) {
  const store = quoteStore(db)
  store.record(sessionId, quotes)
  store.write(store.unwritten.take())
}

/** A simulation policy of `sessionId`, issued at `at`, for a store to insert; `fields` as a test needs them. */
export function policyRecord(sessionId: number, ref: string, at: number, fields: Partial<Omit<PolicyRecord, 'id'>> = {}): Omit<PolicyRecord, 'id'> {
  return {
    sessionId,
    ref,
    svcInsuranceId: `svc_${ref}`,
    planId: 'plan_x',
    product: 'intl_standard',
    status: 'issued',
    trip: { origin_country: 'IN', destination_country: 'FR', start_date: '2030-02-01', end_date: '2030-02-05' },
    travellers: [{ traveller_ref: 't', age: 30 }],
    partnerReference: null,
    currency: 'INR',
    premiumMinor: 100,
    createdAt: at,
    updatedAt: at,
    source: 'simulation',
    upstreamRef: null,
    documentReadyAt: at,
    cancellation: null,
    documentVersion: 1,
    coverageRecorded: 0,
    coverageDueAt: null,
    ...fields,
  }
}
