/**
 * @module Write-behind of the embedded engine. Sessions, rate hits and recorded quotes are served
 * from memory (sessions.ts, rate-limits.ts, quotes.ts); what memory holds that the file does not yet
 * is written at the start of the next transaction: the next policy write, or the one this module
 * commits every `WRITE_BEHIND_MS`, before each sweep, and on close. So a policy's session is durable
 * with it, and a crash loses at most the last interval's sessions with nothing written for them,
 * their rate hits and their quotes (docs/decisions.md).
 */
import { StorageUnavailable } from '../storage'
import type { Prelude, SqliteDriver } from './driver'
import type { quoteStore } from './quotes'
import type { rateLog, RateWindows } from './rate-limits'
import type { SessionStore } from './sessions'

/** How long what memory served may wait for the file: the most a crash loses of it. */
export const WRITE_BEHIND_MS = 200

interface Parts {
  sessions: SessionStore
  quotes: ReturnType<typeof quoteStore>
  rates: RateWindows
  rateLog: ReturnType<typeof rateLog>
}

/** The prelude of every transaction: takes what is unwritten and writes it; puts it back if the transaction fails. */
export function unwrittenPrelude({ sessions, quotes, rates, rateLog }: Parts): Prelude & { isEmpty(): boolean } {
  return {
    isEmpty: () => !sessions.hasUnwritten() && !quotes.hasUnwritten() && !rates.hasUnwritten(),
    write() {
      const taken = { sessions: sessions.takeUnwritten(), quotes: quotes.takeUnwritten(), hits: rates.takeUnwritten() }
      const restore = () => {
        sessions.restore(taken.sessions)
        quotes.restore(taken.quotes)
        rates.restore(taken.hits)
      }
      try {
        // Sessions first: what is written for them refers to them.
        sessions.write(taken.sessions)
        quotes.write(taken.quotes)
        rateLog.write(taken.hits, rates)
      } catch (error) {
        restore()
        throw error
      }
      return { committed: () => {}, rolledBack: restore }
    },
  }
}

/**
 * Commits what is unwritten every `WRITE_BEHIND_MS`, and on demand (`flush`). While the file takes
 * no write (full, read-only), `failure` names why: admission refuses new work then, so memory does
 * not grow without bound, until a write succeeds again.
 */
export function writeBehind(driver: SqliteDriver, isEmpty: () => boolean) {
  let failure: StorageUnavailable | null = null
  let running: Promise<void> | null = null

  async function flush(): Promise<void> {
    if (isEmpty() && !failure) return
    try {
      await driver.groupCommit({ work: () => undefined })
      failure = null
    } catch (error) {
      failure = error instanceof StorageUnavailable ? error : new StorageUnavailable(String(error))
      throw failure
    }
  }

  const timer = setInterval(() => {
    running ??= flush().catch(() => {}).finally(() => (running = null))
  }, WRITE_BEHIND_MS)
  ;(timer as { unref?: () => void }).unref?.()

  return {
    flush,
    /** Why the file takes no write, while it does not. */
    failure: () => failure,
    stop: () => clearInterval(timer),
  }
}
