/**
 * @module Bun's checkpoint worker (storage/drivers/bun.ts): while it runs, no commit on the main
 * thread checkpoints; if it fails, SQLite's own checkpoint comes back so that the WAL stays bounded.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'bun:test'
import { openEmbedded } from '../../src/storage/drivers/bun'
import type { SqliteConnection } from '../../src/storage/drivers/connection'

/** A file opened with this worker module (named as the Bun entry names it), for `check`. */
async function withWorker(module: string, check: (db: SqliteConnection) => Promise<void> | void) {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-checkpointer-'))
  const db = openEmbedded(join(dir, 'sandbox.db'), { checkpointerUrl: new URL(module, import.meta.url).href })
  try {
    await check(db)
  } finally {
    await db.beforeClose?.()
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const autocheckpoint = (db: SqliteConnection) => db.prepare<{ wal_autocheckpoint: number }>('PRAGMA wal_autocheckpoint').get()!.wal_autocheckpoint

test('while the worker checkpoints, commits on the main thread do not', async () => {
  await withWorker('../../src/storage/drivers/bun-checkpointer.ts', (db) => {
    expect(autocheckpoint(db)).toBe(0)
  })
})

test('a worker that fails hands checkpoints back to SQLite', async () => {
  await withWorker('./support/failing-checkpointer.ts', async (db) => {
    // The failure arrives as an event; no deadline but the test runner's.
    while (autocheckpoint(db) === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(autocheckpoint(db)).toBe(1000)
  })
})
