/**
 * @module A Bun worker thread that checkpoints the WAL of the database the server uses, so that
 * copying pages back and the fsync that follows never run inside a request's commit, and starts the
 * WAL anew past `RESTART_PAGES` when writes never pause. It runs at the lowest priority: on a busy
 * core the request thread goes first. After each checkpoint it reports the WAL's size and how much
 * of it is copied back (sqlite.ts paces the sweep by it). Started by `openEmbedded` (sqlite.ts), and
 * stopped before the final checkpoint at shutdown (two checkpointers cannot run at once).
 */
import { Database } from 'bun:sqlite'
import { setPriority } from 'node:os'

/** `mark`: a number the main thread sends; every later report echoes the last one received before its checkpoint began. */
type Message = { start: { path: string; everyMs: number; restartPages?: number } } | { mark: number } | { stop: true }

/**
 * The WAL after a checkpoint: pages in it, pages copied back, and the last mark received before the
 * checkpoint began; and when the checkpoint began (ms since the epoch) and how long it took, with its
 * restart of the WAL (the write lock held) where there was one, for the stall trace (stall-trace.ts).
 */
export interface WalReport {
  pages: number
  copied: number
  mark: number
  at: number
  ms: number
  restart?: { at: number; ms: number }
}

/** What the worker tells the main thread: the WAL after each checkpoint, or that it stopped. */
export type Report = { wal: WalReport } | 'stopped'

declare const self: {
  onmessage: ((event: MessageEvent<Message>) => void) | null
  postMessage(message: Report): void
}

/**
 * WAL pages (64 MB) past which a checkpoint that leaves frames uncopied is finished holding the write
 * lock, so that the WAL starts anew; below SQLite's own checkpoint mark (sqlite.ts), which would
 * otherwise copy the whole WAL inside a request's commit (bench/findings.md, 2026-11-27).
 */
const RESTART_PAGES = 16_000

let db: Database | null = null

/** A checkpoint's result: pages in the WAL and pages copied back. `all()`, not `get()`: a statement left unfinished would hold a read snapshot, and the WAL could never start anew. */
const checkpoint = (mode: 'PASSIVE' | 'RESTART') => db!.query<{ log: number; checkpointed: number }, []>(`PRAGMA wal_checkpoint(${mode})`).all()[0]
let timer: ReturnType<typeof setInterval> | undefined
let mark = 0

self.onmessage = ({ data }) => {
  if ('mark' in data) {
    mark = data.mark
    return
  }
  if ('start' in data) {
    const restartPages = data.start.restartPages ?? RESTART_PAGES
    // This thread only (Linux: a thread's own nice value): on a busy core, requests go first.
    try {
      setPriority(19)
    } catch {
      // not permitted here: the thread keeps the process's priority
    }
    db = new Database(data.start.path)
    db.exec('PRAGMA busy_timeout = 5000')
    timer = setInterval(() => {
      try {
        const markBefore = mark
        const started = performance.now()
        let row = checkpoint('PASSIVE')
        let restart: WalReport['restart']
        // Writes that never pause always leave a frame or two after a pass, and SQLite starts the WAL
        // anew only once all are copied: past the mark, those written during this pass are copied
        // holding the write lock (RESTART), for which the request thread waits without blocking.
        if (row && row.log >= restartPages) {
          const restarted = performance.now()
          row = checkpoint('RESTART') ?? row
          restart = { at: performance.timeOrigin + restarted, ms: performance.now() - restarted }
        }
        if (row) {
          const at = performance.timeOrigin + started
          self.postMessage({ wal: { pages: row.log, copied: row.checkpointed, mark: markBefore, at, ms: performance.now() - started, restart } })
        }
      } catch {
        // busy or failing storage: the next tick tries again, and SQLite's own checkpoint remains
      }
    }, data.start.everyMs)
    return
  }
  clearInterval(timer)
  db?.close()
  db = null
  self.postMessage('stopped')
}
