/**
 * @module Bun's checkpoint worker (storage/drivers/bun.ts) and `walSettled`, by which the sweep
 * waits for it: past a few MB of WAL, a writer that waits gets to write into a WAL started anew
 * (SQLite restarts it only when a write begins with every page copied back).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'bun:test'
import { openEmbedded } from '../../src/storage/drivers/bun'
import type { SqliteConnection } from '../../src/storage/drivers/connection'

/** A file opened with this worker module (named as the Bun entry names it), for `check`. */
async function withWorker(module: string, check: (db: SqliteConnection, path: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-checkpointer-'))
  const path = join(dir, 'sandbox.db')
  const db = openEmbedded(path, { checkpointerUrl: new URL(module, import.meta.url).href })
  try {
    db.exec('CREATE TABLE filler (body BLOB)')
    await check(db, path)
  } finally {
    await db.beforeClose?.()
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** About 8 MB of WAL in one transaction: twice the mark past which `walSettled` waits. */
const fill = (db: SqliteConnection) => db.exec(
  'WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO filler SELECT randomblob(4000) FROM n',
)
/** Pages in the WAL now (from 0 when it was started anew). */
const walPages = (db: SqliteConnection) => db.prepare<{ log: number }>('PRAGMA wal_checkpoint(PASSIVE)').get()!.log
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

test('past the mark, a writer that waits for walSettled writes into a WAL started anew', async () => {
  await withWorker('../../src/storage/drivers/bun-checkpointer.ts', async (db, path) => {
    fill(db)
    // Once the worker has copied the first 8 MB back (the file grows), synced and reported it (a second
    // is ample), the sandbox knows the WAL is past the mark.
    while (statSync(path).size < 8_000_000) await sleep(20)
    await sleep(1000)
    fill(db)
    await db.walSettled!()
    db.exec("INSERT INTO filler VALUES (x'00')")
    expect(walPages(db)).toBeLessThan(100)
  })
})

test('a worker that stops while walSettled waits for its report ends the wait', async () => {
  await withWorker('./support/failing-checkpointer.ts', async (db) => {
    // It reports a WAL past the mark at once, and exits 300 ms later: no report follows. The runner's timeout is the bound.
    await sleep(100)
    await db.walSettled!()
  })
})

test('a worker that stops reporting (every checkpoint failing) holds walSettled for at most 2 s', async () => {
  await withWorker('./support/silent-checkpointer.ts', async (db) => {
    await sleep(100)
    const started = performance.now()
    await db.walSettled!() // without a bound it would never resolve: the runner's timeout fails it
    expect(performance.now() - started).toBeGreaterThan(1_000)
  })
})
