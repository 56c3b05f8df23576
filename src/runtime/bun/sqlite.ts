/**
 * @module The embedded database through `bun:sqlite`, for the Bun entry and the compiled binary.
 * With `checkpointerUrl` (the worker's module, named by the entry so that the compiled binary finds
 * it among its entry points), WAL checkpoints (page copies and their fsync) run in a worker thread: on
 * disk they made most of the request latency tail (bench/run.ts: plan search p99 at half rate
 * 15.9 ms → 6.0 ms). The worker also starts the WAL anew past 64 MB (checkpointer.ts); SQLite's own
 * checkpoint stays on, at 128 MB of WAL, in case the worker stops.
 */
import { Database } from 'bun:sqlite'
import type { Report, WalReport } from './checkpointer'
import { STALL_SPANS, spanOfThread } from '../../stall-trace'
import { type Checkpointer, connectionOver, type SqliteConnection, type SqlValue } from '../../storage/sqlite/connection'

/** Bun's checkpointer, which also tells what the WAL was at its last report (its test reads it). */
export interface WorkerCheckpointer extends Checkpointer {
  report(): { pages: number; copied: number }
}

/** `restartPages`: the WAL's size past which the worker starts it anew (checkpointer.ts; its tests make it small). */
export function openEmbedded(
  path: string,
  options: { checkpointerUrl?: string; restartPages?: number } = {},
): SqliteConnection & { checkpointer?: WorkerCheckpointer } {
  const db = new Database(path, { create: true, readwrite: true })
  const connection = connectionOver(db, (sql) => db.query<unknown, SqlValue[]>(sql))
  // After the pragmas (WAL first): the worker opens the same file.
  if (!options.checkpointerUrl || path === ':memory:') return connection
  return { ...connection, checkpointer: startCheckpointer(db, path, options.checkpointerUrl, options.restartPages) }
}

/**
 * WAL pages past which `settled` waits (4 MB). SQLite starts the WAL anew only when a write
 * begins with every page copied back; a sweep writing without a pause let it grow to SQLite's own
 * checkpoint mark, which then ran inside a request's commit (bench/findings.md).
 */
const SETTLED_PAGES = 1_000
/** How long `settled` waits at most: a worker whose checkpoints fail (and so report nothing) does not stop the sweep. */
const MOST_WAIT_MS = 2_000

function startCheckpointer(db: Database, path: string, url: string, restartPages?: number): WorkerCheckpointer {
  db.exec('PRAGMA wal_autocheckpoint = 32000')
  // The worker holds the write lock while it restarts the WAL: the request thread does not wait for
  // it inside SQLite, which would stop every request; a transaction waits for it between turns
  // (storage/sqlite/driver.ts).
  db.exec('PRAGMA busy_timeout = 0')
  const worker = new Worker(url)
  let wal: WalReport = { pages: 0, copied: 0, mark: 0, at: 0, ms: 0 }
  let marks = 0
  let running = true
  let reported = () => {}
  worker.addEventListener('message', ({ data }: MessageEvent<Report>) => {
    if (data === 'stopped') return
    wal = data.wal
    spanOfThread(STALL_SPANS.checkpoint, wal.at, wal.ms)
    if (wal.restart) spanOfThread(wal.restart.done ? STALL_SPANS.restart : STALL_SPANS.restartGivenUp, wal.restart.at, wal.restart.ms)
    reported()
  })
  worker.addEventListener('close', () => {
    running = false
    reported()
  })
  worker.postMessage({ start: { path, everyMs: 200, restartPages } })
  ;(worker as Worker & { unref(): void }).unref() // Bun: the worker does not keep the process alive
  /** The next report, the worker's end, or `ms`, whichever comes first. */
  const nextReport = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      reported = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  return {
    /**
     * Resolves at once while the WAL is small; past the mark, once a checkpoint begun after the call
     * (so after the caller's last write: the worker echoes the mark it had when it began) has copied
     * everything back, so that the next write starts the WAL anew. One waiter at a time: the sweep.
     */
    async settled(mostWaitMs = MOST_WAIT_MS): Promise<void> {
      if (!running || wal.pages <= SETTLED_PAGES) return
      const mark = ++marks
      worker.postMessage({ mark })
      const until = performance.now() + mostWaitMs
      while (running && performance.now() < until) {
        await nextReport(Math.min(300, until - performance.now()))
        if (wal.mark >= mark && (wal.pages <= SETTLED_PAGES || wal.copied >= wal.pages)) return
      }
    },
    report: () => wal,
    async stop(): Promise<void> {
      if (!running) return
      running = false
      reported()
      await stopCheckpointer(worker)
    },
  }
}

/** Stops the checkpointer (at most 1 s) so that the final checkpoint at shutdown can truncate the WAL. */
async function stopCheckpointer(worker: Worker): Promise<void> {
  await new Promise<void>((resolve) => {
    const timeout = setTimeout(resolve, 1000)
    worker.addEventListener('message', ({ data }: MessageEvent<Report>) => {
      if (data !== 'stopped') return
      clearTimeout(timeout)
      resolve()
    })
    worker.postMessage({ stop: true })
  })
  worker.terminate()
}
