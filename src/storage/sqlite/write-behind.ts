/**
 * @module Write-behind of the embedded engine. Sessions, rate hits and recorded quotes are served
 * from memory (sessions.ts, rate-limits.ts, quotes.ts) and written by the transaction this module
 * commits every `WRITE_BEHIND_MS`, before each sweep, and on close. Every other transaction writes
 * the unwritten sessions and quotes first, so a policy's session and the plan it was issued from are
 * durable with it. A crash loses at most the last interval's sessions with nothing written for them,
 * rate hits and quotes (docs/decisions.md).
 */
import { timed } from '../../stall-trace'
import { StorageUnavailable } from '../storage'
import { asStorageError, isBusy } from './faults'
import type { QuoteStore } from './quotes'
import type { rateLog, RateWindows } from './rate-limits'
import type { RequestLog } from './request-log'
import type { SessionStore } from './sessions'

/** How long what memory served may wait for the file: the most a crash loses of it. */
export const WRITE_BEHIND_MS = 200

interface Parts {
  sessions: SessionStore
  quotes: QuoteStore
  rates: RateWindows
  rateLog: ReturnType<typeof rateLog>
  requestLog: RequestLog
}

/**
 * The prelude of every transaction (driver.ts): takes what is unwritten and writes it; puts it back
 * if the transaction fails. Sessions, which what a transaction writes refers to, and quotes, so that a plan
 * a policy was issued from stays in the file with it (few: a quote is written once); rate hits and
 * the request log, which every call adds, only in the write-behind's own transaction.
 */
export function unwrittenRows({ sessions, quotes, rates, rateLog, requestLog }: Parts) {
  return {
    isEmpty: () => sessions.unwritten.isEmpty() && quotes.unwritten.isEmpty() && rates.unwritten.isEmpty() && requestLog.unwritten.isEmpty(),
    write(everything: boolean): { rolledBack(): void } {
      const taken = {
        sessions: sessions.unwritten.take(),
        quotes: quotes.unwritten.take(),
        hits: everything ? rates.unwritten.take() : new Map(),
        calls: everything ? requestLog.unwritten.take() : [],
      }
      const restore = () => {
        sessions.unwritten.restore(taken.sessions)
        quotes.unwritten.restore(taken.quotes)
        rates.unwritten.restore(taken.hits)
        requestLog.unwritten.restore(taken.calls)
      }
      try {
        // Sessions first: what is written for them refers to them.
        timed('sessions written', () => sessions.write(taken.sessions))
        timed('quotes written', () => quotes.write(taken.quotes))
        timed('rate hits written', () => rateLog.write(taken.hits, rates))
        timed('request log written', () => requestLog.write(taken.calls))
      } catch (error) {
        // A storage fault passes (the file full, read-only): kept, written once it takes writes again.
        // Anything else would fail again on every retry and block every write: dropped.
        if (asStorageError(error) instanceof StorageUnavailable) restore()
        throw error
      }
      return { rolledBack: restore }
    },
  }
}

/**
 * Commits what is unwritten every `WRITE_BEHIND_MS`, and on demand (`flush`). While the file takes
 * no write (full, read-only), `failure` names why: admission refuses new work then, so memory does
 * not grow without bound, until a write succeeds again.
 */
export function writeBehind(writeEverything: () => Promise<void>, isEmpty: () => boolean, intervalMs = WRITE_BEHIND_MS) {
  let failure: StorageUnavailable | null = null
  let running: Promise<void> | null = null

  /** Commits what is unwritten; `always`, even when nothing seems to be (a batch running may yet give some back). */
  async function flush(always = false): Promise<void> {
    if (isEmpty() && !failure && !always) return
    try {
      await writeEverything()
      failure = null
    } catch (error) {
      const unavailable = error instanceof StorageUnavailable ? error : new StorageUnavailable(String(error))
      // The write lock held past a transaction's wait (the WAL restarted on a slow disk): the file is
      // fine, admission goes on, and the next round tries again.
      if (!isBusy(unavailable)) failure = unavailable
      throw unavailable
    }
  }

  const timer =
    intervalMs > 0
      ? setInterval(() => {
          running ??= flush()
            .catch(() => {})
            .finally(() => (running = null))
        }, intervalMs)
      : undefined
  ;(timer as { unref?: () => void } | undefined)?.unref?.()

  return {
    flush,
    /** Why the file takes no write, while it does not. */
    failure: () => failure,
    stop: () => clearInterval(timer),
  }
}
