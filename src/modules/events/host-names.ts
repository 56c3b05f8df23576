/**
 * @module Webhook host names, resolved so that one session's names never hold up anyone else's.
 * - Public targets (hosted): each lookup asks DNS through a client of its own (node:dns's Resolver,
 *   c-ares), never the system's getaddrinfo, whose few threads (two on a 2-core host under Bun) the
 *   insurer's and the database's host names share; its queries are cancelled at LOOKUP_TIMEOUT_MS.
 * - Any target (one's own machine): the system's resolver, so that names resolve as the machine
 *   resolves them (/etc/hosts included), one lookup at a time, so that it holds at most one of those
 *   threads; a lookup waits LOOKUP_TIMEOUT_MS at most for its turn and as long again for its answer.
 * - Everywhere: at most PER_CALLER lookups in flight per caller (a session, a network), later ones
 *   waiting their turn within their own deadline; one lookup in flight per name, shared by whoever
 *   asks for it meanwhile; a name that failed answers that failure for FAILURE_MEMORY_MS without
 *   asking again.
 */
import { lookup as systemLookup, Resolver } from 'node:dns/promises'
import { isIP } from 'node:net'

export type Targets = 'any' | 'public'

/** A name's addresses (IPv4 first), or why there are none. */
export type Lookup = { addresses: string[] } | { failure: 'timeout' | 'not_found' }

export const LOOKUP_TIMEOUT_MS = 3_000
/** Long enough to spare DNS a name's repeats (a delivery's next attempt 1 s later), short enough not to cost the one after. */
export const FAILURE_MEMORY_MS = 5_000
export const PER_CALLER = 2
/** Past this many remembered failures the expired ones are forgotten, then the oldest. */
const MEMORY_LIMIT = 10_000

/** A record type a name has none of: not a failure, the other type may have some. */
const NO_RECORDS = new Set(['ENODATA', 'ENOTFOUND'])

export interface HostNames {
  /**
   * The addresses of `host` (an IP address answers itself). `callers` (e.g. `s:42`, `n:203.0.113.7`)
   * each wait for a turn of their own; `deadline` ends the wait, answered as `timeout`.
   */
  lookup(host: string, callers: string[], deadline: AbortSignal): Promise<Lookup>
}

export interface HostNamesOptions {
  clock?: () => number
  /** How a name is looked up (tests): by default DNS for `public` targets, the system for `any`. */
  ask?: (host: string) => Promise<Lookup>
}

export function hostNames(targets: Targets, options: HostNamesOptions = {}): HostNames {
  const clock = options.clock ?? Date.now
  const asking = new Map<string, Promise<Lookup>>()
  const failed = new Map<string, { failure: 'timeout' | 'not_found'; until: number }>()
  const turns = new Map<string, Turns>()
  // Any-target lookups hold a thread of the system's pool each: one at a time.
  const system = new Turns(1)
  const askName = options.ask ?? (targets === 'any' ? (host: string) => askSystem(host, system) : askDns)

  function remember(host: string, answer: Lookup): void {
    if (!('failure' in answer)) return
    if (failed.size >= MEMORY_LIMIT) {
      for (const [name, entry] of failed) if (entry.until <= clock()) failed.delete(name)
      for (const name of failed.keys()) if (failed.size >= MEMORY_LIMIT) failed.delete(name)
    }
    failed.set(host, { failure: answer.failure, until: clock() + FAILURE_MEMORY_MS })
  }

  /** The one lookup of `host` in flight, started if none is; never rejects (a lookup that throws did not answer). */
  function ask(host: string): Promise<Lookup> {
    let answer = asking.get(host)
    if (!answer) {
      answer = Promise.resolve()
        .then(() => askName(host))
        .catch((): Lookup => ({ failure: 'timeout' }))
        .then((result) => {
          remember(host, result)
          return result
        })
        .finally(() => asking.delete(host))
      asking.set(host, answer)
    }
    return answer
  }

  return {
    async lookup(host, callers, deadline) {
      if (isIP(host)) return { addresses: [host] }
      const name = host.toLowerCase().replace(/\.$/, '')
      // Loopback by definition (RFC 6761), whatever a resolver says.
      if (name === 'localhost' || name.endsWith('.localhost')) return { addresses: ['127.0.0.1', '::1'] }
      const memory = failed.get(name)
      if (memory && memory.until > clock()) return { failure: memory.failure }
      const taken: Turns[] = []
      try {
        // Always a session's turn before its network's, so that no two lookups wait for each other.
        for (const caller of callers) {
          // Looked up when taken: another lookup may have forgotten an idle caller meanwhile.
          const callerTurns = turnsOf(turns, caller)
          if (!(await callerTurns.take(deadline))) return { failure: 'timeout' }
          taken.push(callerTurns)
        }
        return await untilAborted(ask(name), deadline, { failure: 'timeout' })
      } finally {
        for (const callerTurns of taken) callerTurns.give()
        for (const caller of callers) if (turns.get(caller)?.idle) turns.delete(caller)
      }
    },
  }
}

/** A DNS client of this lookup's own, asked for A and AAAA at once, cancelled at the time-out. */
async function askDns(host: string): Promise<Lookup> {
  const resolver = new Resolver({ timeout: LOOKUP_TIMEOUT_MS, tries: 1 })
  const timer = setTimeout(() => {
    try {
      resolver.cancel()
    } catch {
      // Nothing to cancel where a runtime cannot: its own time-out (the option above) ends the queries.
    }
  }, LOOKUP_TIMEOUT_MS)
  try {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)])
    const addresses = [v4, v6].flatMap((result) => (result.status === 'fulfilled' ? result.value : []))
    if (addresses.length > 0) return { addresses }
    const errors = [v4, v6].map((result) => (result.status === 'rejected' ? (result.reason as { code?: string }).code : undefined))
    return { failure: errors.every((code) => code && NO_RECORDS.has(code)) ? 'not_found' : 'timeout' }
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The system's resolver, as the machine resolves names, in `turn`. The answer waits at most the
 * time-out; the turn is held until the system's thread is done, so that at most one is ever taken.
 */
async function askSystem(host: string, turn: Turns): Promise<Lookup> {
  if (!(await turn.take(AbortSignal.timeout(LOOKUP_TIMEOUT_MS)))) return { failure: 'timeout' }
  let answer: Promise<Lookup>
  try {
    answer = systemLookup(host, { all: true }).then(
      (found): Lookup => ({ addresses: [...found].sort((a, b) => a.family - b.family).map(({ address }) => address) }),
      (error: { code?: string }): Lookup => ({ failure: error.code && NO_RECORDS.has(error.code) ? 'not_found' : 'timeout' }),
    )
  } catch {
    answer = Promise.resolve({ failure: 'timeout' })
  }
  void answer.finally(() => turn.give())
  return untilAborted(answer, AbortSignal.timeout(LOOKUP_TIMEOUT_MS), { failure: 'timeout' })
}

/** `work`'s answer, or `otherwise` once `signal` aborts first (or `work` fails). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal, otherwise: T): Promise<T> {
  if (signal.aborted) return Promise.resolve(otherwise)
  return new Promise((resolve) => {
    const abort = () => resolve(otherwise)
    signal.addEventListener('abort', abort, { once: true })
    work.then(resolve, () => resolve(otherwise)).finally(() => signal.removeEventListener('abort', abort))
  })
}

function turnsOf(turns: Map<string, Turns>, caller: string): Turns {
  let callerTurns = turns.get(caller)
  if (!callerTurns) turns.set(caller, (callerTurns = new Turns(PER_CALLER)))
  return callerTurns
}

/** At most `size` holders at once; the others wait in order, each until its deadline. */
class Turns {
  private held = 0
  private readonly waiting: (() => void)[] = []

  constructor(private readonly size: number) {}

  get idle(): boolean {
    return this.held === 0 && this.waiting.length === 0
  }

  /** Whether a turn was taken before `deadline` aborted. */
  take(deadline: AbortSignal): Promise<boolean> {
    if (this.held < this.size) {
      this.held++
      return Promise.resolve(true)
    }
    return new Promise((resolve) => {
      const wake = () => {
        deadline.removeEventListener('abort', abort)
        this.held++
        resolve(true)
      }
      const abort = () => {
        this.waiting.splice(this.waiting.indexOf(wake), 1)
        resolve(false)
      }
      if (deadline.aborted) return resolve(false)
      this.waiting.push(wake)
      deadline.addEventListener('abort', abort, { once: true })
    })
  }

  give(): void {
    this.held--
    this.waiting.shift()?.()
  }
}
