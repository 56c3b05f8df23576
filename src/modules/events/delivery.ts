/**
 * @module Webhook deliveries: every process keeps up to IN_FLIGHT calls out, at most PER_ENDPOINT of
 * them to one session's endpoint, and claims more (the storage's lease: one process or instance per
 * attempt) as each call ends and every POLL_MS, so that a slow endpoint holds only its own
 * session's places. Each delivery is sent signed and its outcome recorded with the time of the next
 * attempt. Deliveries are rows, so a restart resumes them; no lock, transaction or connection is
 * held while a call is out.
 */
import type { Services } from '../services'
import type { Delivery } from '../../storage/storage'
import { CALL_TIMEOUT_MS, postJson } from './outbound'
import { signatureHeader } from './signature'

/** Seconds before each attempt after the first. */
export const RETRY_DELAYS_S = [1, 5, 30, 120, 600]
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1
/**
 * The schedule in the words every description of it uses (README, docs/api.md, the OpenAPI
 * document): `6 attempts over 12.6 minutes (1, 5, 30, 120 and 600 s apart)`.
 */
export const RETRY_SCHEDULE =
  `${MAX_ATTEMPTS} attempts over ${+(RETRY_DELAYS_S.reduce((sum, delay) => sum + delay) / 60).toFixed(1)} minutes ` +
  `(${RETRY_DELAYS_S.slice(0, -1).join(', ')} and ${RETRY_DELAYS_S.at(-1)} s apart)`
/** Longer than any call, so a claim lapses only when its process is gone. */
const LEASE_MS = CALL_TIMEOUT_MS * 2
const POLL_MS = 200
/** After the database failed a poll: wait longer, rather than log an error five times a second. */
const ERROR_BACKOFF_MS = 5_000
/**
 * Calls out at once, per process: each is a socket and a timer, nothing that blocks. Filling them
 * with endpoints that never answer takes 128 sessions with two events each: the whole fair-use
 * allowance (30 calls in 10 minutes) of 13 networks.
 */
export const IN_FLIGHT = 256
/** Calls out at once to one session's endpoint, per process. */
export const PER_ENDPOINT = 2

/** Any 2xx answer delivers an event. */
export const isDelivered = (status: number | null) => status !== null && status >= 200 && status < 300

type Deps = Pick<Services, 'storage' | 'clock' | 'config' | 'log' | 'hostNames'>

/** Sends one claimed delivery and records how it went; never throws. */
async function deliver(services: Deps, delivery: Delivery): Promise<void> {
  try {
    const at = services.clock()
    const outcome = await postJson(
      delivery.webhook.url,
      delivery.body,
      {
        'sandbox-signature': signatureHeader(delivery.webhook.secret, Math.floor(at / 1000), delivery.body),
        'sandbox-event-id': delivery.ref,
        'sandbox-event-type': delivery.type,
        'user-agent': 'travel-protection-sandbox-webhooks',
      },
      services.config.webhookTargets,
      { hostNames: services.hostNames, callers: [`s:${delivery.sessionId}`] },
    )
    const status = 'status' in outcome ? outcome.status : null
    const nextAt = isDelivered(status) || delivery.attempt >= MAX_ATTEMPTS ? null : services.clock() + RETRY_DELAYS_S[delivery.attempt - 1]! * 1000
    await services.storage.recordAttempt(delivery.eventId, delivery.lease, { at, status, error: 'error' in outcome ? outcome.error : null }, nextAt)
  } catch (error) {
    // Unrecorded, the attempt is made again once its lease lapses.
    services.log({ level: 'error', msg: 'webhook delivery not recorded', error: String(error) })
  }
}

/** Starts delivering; `stop` waits for the calls out to end and their outcomes to be recorded. */
export function startDeliveries(services: Deps): { stop(): Promise<void> } {
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  /** Calls out, per session. */
  const out = new Map<number, number>()
  const calls = new Set<Promise<void>>()
  let claiming: Promise<void> | null = null
  let claimAgain = false

  /** Claims what the free places allow, starts each call, and claims again as each ends. */
  async function claim(): Promise<number> {
    const free = IN_FLIGHT - calls.size
    if (free <= 0) return 0
    // A session with a call out waits for it to end: at most PER_ENDPOINT out at once.
    const due = await services.storage.claimDeliveries(services.clock(), LEASE_MS, { limit: free, perSession: PER_ENDPOINT, skip: [...out.keys()] })
    for (const delivery of due) start(delivery)
    return due.length
  }

  function start(delivery: Delivery): void {
    out.set(delivery.sessionId, (out.get(delivery.sessionId) ?? 0) + 1)
    const call = deliver(services, delivery).finally(() => {
      calls.delete(call)
      const left = out.get(delivery.sessionId)! - 1
      if (left === 0) out.delete(delivery.sessionId)
      else out.set(delivery.sessionId, left)
      refill()
    })
    calls.add(call)
  }

  /** Claims now, or once the claim under way ends; never two at once. */
  function refill(): void {
    if (stopped) return
    if (claiming) {
      claimAgain = true
      return
    }
    claiming = (async () => {
      let next = POLL_MS
      try {
        do {
          claimAgain = false
          // A claim that filled every free place may have left more due: claim again at once.
          if ((await claim()) > 0 && calls.size < IN_FLIGHT) claimAgain = true
        } while (claimAgain && !stopped)
      } catch (error) {
        services.log({ level: 'error', msg: 'webhook deliveries not claimed', error: String(error) })
        next = ERROR_BACKOFF_MS
      }
      claiming = null
      clearTimeout(timer)
      if (!stopped) timer = setTimeout(refill, next)
    })()
  }

  timer = setTimeout(refill, POLL_MS)
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await claiming
      await Promise.all(calls)
    },
  }
}
