/**
 * @module Bun's checkpoint worker (runtime/bun/sqlite.ts) and its `settled`, by which the sweep
 * waits for it: past a few MB of WAL, a writer that waits gets to write into a WAL started anew
 * (SQLite restarts it only when a write begins with every page copied back).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'bun:test'
import { openEmbedded } from '../../src/runtime/bun/sqlite'
import type { SqliteConnection } from '../../src/storage/sqlite/connection'

/** A file opened with this worker module (named as the Bun entry names it), for `check`. */
async function withWorker(module: string, check: (db: ReturnType<typeof openEmbedded>) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-checkpointer-'))
  const path = join(dir, 'sandbox.db')
  const db = openEmbedded(path, { checkpointerUrl: new URL(module, import.meta.url).href })
  try {
    db.exec('CREATE TABLE filler (body BLOB)')
    await check(db)
  } finally {
    await db.checkpointer?.stop()
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** About 8 MB of WAL in one transaction: twice the mark past which `settled` waits. */
const fill = (db: SqliteConnection) =>
  db.exec('WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO filler SELECT randomblob(4000) FROM n')
/** Pages in the WAL now (from 0 when it was started anew). */
const walPages = (db: SqliteConnection) => db.prepare<{ log: number }>('PRAGMA wal_checkpoint(PASSIVE)').get()!.log
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
/** Until the worker has reported a WAL past the mark (no deadline but the test runner's). */
async function reportedPastTheMark(db: ReturnType<typeof openEmbedded>) {
  while (db.checkpointer!.report().pages <= 1_000) await sleep(20)
}

test('past the mark, a writer that waits for `settled` writes into a WAL started anew', async () => {
  await withWorker('../../src/runtime/bun/checkpointer.ts', async (db) => {
    fill(db)
    await reportedPastTheMark(db)
    // The WAL was all copied back: this starts it anew, and fills it past the mark again.
    fill(db)
    // No time bound but the runner's: on a loaded disk the worker's copy and fsync may take longer than the sweep's 2 s.
    await db.checkpointer!.settled(600_000)
    db.exec("INSERT INTO filler VALUES (x'00')")
    expect(walPages(db)).toBeLessThan(100)
  })
})

test('a worker that stops while `settled` waits for its report ends the wait', async () => {
  await withWorker('./support/failing-checkpointer.ts', async (db) => {
    // It reports a WAL past the mark, and exits 300 ms later: no report follows, and only its end can end the wait.
    await reportedPastTheMark(db)
    await db.checkpointer!.settled(600_000)
  })
})

test('a worker that stops reporting (every checkpoint failing) holds `settled` no longer than asked', async () => {
  await withWorker('./support/silent-checkpointer.ts', async (db) => {
    await reportedPastTheMark(db)
    const started = performance.now()
    await db.checkpointer!.settled(1_000) // without the bound it would never resolve: the runner's timeout fails it
    expect(performance.now() - started).toBeGreaterThanOrEqual(900)
  })
})
