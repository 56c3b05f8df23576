/**
 * @module The expiry sweep's rules, shared by the engines: how much one batch may take, and the loop
 * that runs batches while leaving room for requests. What it keeps of an ended session, and how long,
 * is domain/session-tombstone.ts.
 */
import type { SweepResult } from './storage'

/**
 * Sessions per batch of each engine: each batch is one short transaction, and requests run between
 * batches. On SQLite a batch holds the write lock on the request thread (about 0.2 ms a session on
 * tmpfs), and now and then one takes ten times as long: during a sweep of 100,000 sessions on disk
 * every request of 50 ms or more waited for such a batch (15–60 ms with 20 a batch, 15–23 ms with
 * 10; `bun bench/run.ts --only scale`, bench/findings.md). PostgreSQL's requests do not wait for a
 * batch (it locks only the rows it claims), so it keeps larger ones.
 */
export const SESSIONS_PER_BATCH = { sqlite: 10, postgres: 50 } as const

export type SweepBatch = (now: number) => Promise<SweepResult & { done: boolean }>

/**
 * Runs batches until nothing is left, resting between them so that requests go first, and, where
 * the engine says so (`settled`), until the WAL it writes has been copied back.
 */
export async function sweepInBatches(batch: SweepBatch, now: number, settled?: () => Promise<void>): Promise<SweepResult> {
  const total: SweepResult = { sessionsPurged: 0, sessionsForgotten: 0, rateHitsDeleted: 0 }
  for (;;) {
    const started = performance.now()
    const swept = await batch(now)
    total.sessionsPurged += swept.sessionsPurged
    total.sessionsForgotten += swept.sessionsForgotten
    total.rateHitsDeleted += swept.rateHitsDeleted
    if (swept.done) return total
    // Rest as long as the batch ran: the sweep takes at most half of the process's time (bench/run.ts:
    // the worst request during a sweep of 30,000 sessions on disk 105 → 80 ms).
    await new Promise((resolve) => setTimeout(resolve, performance.now() - started))
    await settled?.()
  }
}
