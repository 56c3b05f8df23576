/**
 * @module A Bun worker thread that checkpoints the WAL of the database the server uses, so that
 * copying pages back and the fsync that follows never run inside a request's commit, and starts the
 * WAL anew past `RESTART_PAGES` when writes never pause. It runs at nice 19 with short slices: on a
 * busy core the request thread goes first (thread-priority.ts). After each checkpoint it reports the
 * WAL's size and how much of it is copied back (sqlite.ts paces the sweep by it). Started by
 * `openEmbedded` (sqlite.ts), and stopped before the final checkpoint at shutdown (two
 * checkpointers cannot run at once).
 */
import { Database } from 'bun:sqlite'
import { closeSync, fsyncSync, openSync } from 'node:fs'
import { yieldQuickly } from './thread-priority'

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
  /** `done`: the WAL starts anew with the next write; else the restart gave up (busy), and copied what it could. */
  restart?: { at: number; ms: number; done: boolean }
}

/** What the worker tells the main thread: the WAL after each checkpoint, or that it stopped. */
export type Report = { wal: WalReport } | 'stopped'

declare const self: {
  onmessage: ((event: MessageEvent<Message>) => void) | null
  postMessage(message: Report): void
}

/**
 * WAL pages (64 MB) past which the worker finishes a pass holding the write lock, so that the WAL
 * starts anew; below SQLite's own checkpoint mark (sqlite.ts), which would otherwise copy the whole
 * WAL inside a request's commit (bench/findings.md, 2026-11-27).
 */
const RESTART_PAGES = 16_000

/**
 * How long a restart waits for the request thread's transaction and reads to end before it gives up
 * (and copies what it can, as a pass does); below the 5 s a transaction waits for the lock (driver.ts).
 */
const RESTART_WAIT_MS = 1_000

/** Passes made before a restart at most, beyond the first; and a pass short enough to restart after. */
const MORE_PASSES = 3
const SHORT_PASS_MS = 10

let db: Database | null = null
/** The database file, flushed after each pass (`flushFile`). */
let file: number | null = null
let timer: ReturnType<typeof setInterval> | undefined
let mark = 0
/** The WAL's size when it was last restarted: until a write starts it anew, it needs no other restart. */
let restartedAt = -1

/**
 * A checkpoint's result: whether it gave up (busy), pages in the WAL, pages copied back. `all()`, not
 * `get()`: a statement left unfinished would hold a read snapshot, and the WAL could never start anew.
 */
const checkpoint = (mode: 'PASSIVE' | 'RESTART') =>
  db!.query<{ busy: number; log: number; checkpointed: number }, []>(`PRAGMA wal_checkpoint(${mode})`).all()[0]

/**
 * Flushes the pages a pass copied into the database file. SQLite flushes the file only when a
 * checkpoint copies the whole WAL, which under steady writes is the restart alone: that flush, made
 * holding the write lock, then had every page copied since the last restart to write (bench/findings.md).
 */
function flushFile(): void {
  if (file !== null) fsyncSync(file)
}

/** One pass; past the mark, more until one is short, then the frames written meanwhile copied holding the write lock, so that the WAL starts anew. */
function pass(restartPages: number): WalReport | null {
  const markBefore = mark
  const started = performance.now()
  let row = checkpoint('PASSIVE')
  if (row && row.checkpointed > 0) flushFile()
  let restart: WalReport['restart']
  // Writes that never pause always leave a frame or two after a pass, and SQLite starts the WAL anew
  // only once all are copied: the rest is copied holding the write lock (RESTART), for which the
  // request thread waits without blocking. More passes first copy and flush, outside the lock, what
  // was written during the one before, until one is short, so that the restart holds the lock only
  // for what was written during that short one (bench/findings.md).
  if (row && row.log >= restartPages && row.log !== restartedAt) {
    for (let more = 0; more < MORE_PASSES; more++) {
      const begun = performance.now()
      if (checkpoint('PASSIVE')?.checkpointed) flushFile()
      if (performance.now() - begun < SHORT_PASS_MS) break
    }
    const restarted = performance.now()
    row = checkpoint('RESTART') ?? row
    const done = row.busy === 0
    if (done) restartedAt = row.log
    restart = { at: performance.timeOrigin + restarted, ms: performance.now() - restarted, done }
  }
  if (!row) return null
  return { pages: row.log, copied: row.checkpointed, mark: markBefore, at: performance.timeOrigin + started, ms: performance.now() - started, restart }
}

self.onmessage = ({ data }) => {
  if ('mark' in data) {
    mark = data.mark
    return
  }
  if ('start' in data) {
    const restartPages = data.start.restartPages ?? RESTART_PAGES
    // On a busy core, requests go first (thread-priority.ts). Not the idle policy (SCHED_IDLE): with
    // it, under a load that never paused, the thread hardly ran, and issue's p99 under wrk went
    // from 74 to 167 ms (most likely SQLite's own checkpoint, in a commit, copied the WAL instead).
    yieldQuickly()
    db = new Database(data.start.path)
    file = openSync(data.start.path, 'r')
    db.exec(`PRAGMA busy_timeout = ${RESTART_WAIT_MS}`)
    timer = setInterval(() => {
      try {
        const wal = pass(restartPages)
        if (wal) self.postMessage({ wal })
      } catch {
        // failing storage: the next tick tries again, and SQLite's own checkpoint remains
      }
    }, data.start.everyMs)
    return
  }
  clearInterval(timer)
  db?.close()
  db = null
  if (file !== null) closeSync(file)
  file = null
  self.postMessage('stopped')
}
