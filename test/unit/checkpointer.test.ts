/**
 * @module Bun's checkpoint worker (runtime/bun/sqlite.ts) and its `settled`, by which the sweep
 * waits for it: past a few MB of WAL, a writer that waits gets to write into a WAL started anew
 * (SQLite restarts it only when a write begins with every page copied back).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { openEmbedded } from '../../src/runtime/bun/sqlite'
import type { SqliteConnection } from '../../src/storage/sqlite/connection'
import { sqliteDriver } from '../../src/storage/sqlite/driver'
import { niceOf, policyOf, threadsNamed } from './support/thread-policy'

/** A file opened with this worker module (named as the Bun entry names it), for `check`. */
async function withWorker(module: string, check: (db: ReturnType<typeof openEmbedded>, path: string) => Promise<void>, restartPages?: number) {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-checkpointer-'))
  const path = join(dir, 'sandbox.db')
  const db = openEmbedded(path, { checkpointerUrl: new URL(module, import.meta.url).href, restartPages })
  try {
    db.exec('CREATE TABLE filler (body BLOB)')
    await check(db, path)
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

test.skipIf(process.platform !== 'linux')(
  'the worker runs at the lowest priority, not only when the core is idle: it must still run under a load that never pauses',
  async () => {
    await withWorker('../../src/runtime/bun/checkpointer.ts', async (db) => {
      fill(db)
      await reportedPastTheMark(db)
      const workers = threadsNamed('Worker')
      expect(workers.map(niceOf)).toContain(19)
      expect(workers.map(policyOf)).not.toContain(5)
    })
  },
)

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

test('writes that never pause: past its mark the worker starts the WAL anew', async () => {
  await withWorker(
    '../../src/runtime/bun/checkpointer.ts',
    async (db) => {
      // SQLite's own checkpoint off: only the worker can start the WAL anew, however slow the disk.
      db.exec('PRAGMA wal_autocheckpoint = 0')
      const driver = sqliteDriver(db)
      let most = 0
      for (let round = 0; most < 16_000 && round < 20_000; round++) {
        await driver.transaction((connection) => connection.exec('INSERT INTO filler SELECT randomblob(4000) FROM (SELECT 1 UNION ALL SELECT 2)'))
        const { pages } = db.checkpointer!.report()
        if (most >= 1_000 && pages < most / 2) return
        most = Math.max(most, pages)
        await sleep(1)
      }
      throw new Error(`the WAL reached ${most} pages without starting anew`)
    },
    1_000,
  )
})

test('a transaction waits for the write lock another connection holds without holding the thread or the connection, then commits', async () => {
  await withWorker('../../src/runtime/bun/checkpointer.ts', async (db, path) => {
    const other = new Database(path)
    other.exec('BEGIN IMMEDIATE')
    let committed = false
    const driver = sqliteDriver(db)
    const transaction = driver.transaction((connection) => connection.exec("INSERT INTO filler VALUES (x'01')")).then(() => (committed = true))
    // A timer runs while the transaction waits (the thread is free), and so does a read (it gave its turn back).
    const started = performance.now()
    await sleep(5)
    expect(performance.now() - started).toBeLessThan(2_500)
    const read = await driver.provideConnection((connection) => connection.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM filler').get()!.n)
    expect(read).toBe(0)
    expect(committed).toBe(false)
    other.exec('COMMIT')
    other.close()
    await transaction
    expect(db.prepare<{ n: number }>("SELECT COUNT(*) AS n FROM filler WHERE body = x'01'").get()!.n).toBe(1)
  })
})
