/**
 * @module Webhook deliveries: every process polls for due deliveries, claims a few (the storage's
 * lease: one process or instance per attempt), sends each signed, and records the outcome with the
 * time of the next attempt. Deliveries are rows, so a restart resumes them; no lock, transaction or
 * connection is held while a call is out.
 */
import type { Services } from '../services'
import type { Delivery } from '../../storage/storage'
import { CALL_TIMEOUT_MS, postJson } from './outbound'
import { signatureHeader } from './signature'

/** Seconds before each attempt after the first: 6 attempts over about 12.5 minutes. */
export const RETRY_DELAYS_S = [1, 5, 30, 120, 600]
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1
/** Longer than any call, so a claim lapses only when its process is gone. */
const LEASE_MS = CALL_TIMEOUT_MS * 2
const POLL_MS = 200
/** After the database failed a poll: wait longer, rather than log an error five times a second. */
const ERROR_BACKOFF_MS = 5_000
const BATCH = 20

/** Any 2xx answer delivers an event. */
export const isDelivered = (status: number | null) => status !== null && status >= 200 && status < 300

type Deps = Pick<Services, 'storage' | 'clock' | 'config' | 'log'>

/** Sends one claimed delivery and records how it went; never throws. */
async function deliver(services: Deps, delivery: Delivery): Promise<void> {
  try {
    const at = services.clock()
    const outcome = await postJson(delivery.webhook.url, delivery.body, {
      'sandbox-signature': signatureHeader(delivery.webhook.secret, Math.floor(at / 1000), delivery.body),
      'sandbox-event-id': delivery.ref,
      'sandbox-event-type': delivery.type,
      'user-agent': 'travel-protection-sandbox-webhooks',
    }, services.config.webhookTargets)
    const status = 'status' in outcome ? outcome.status : null
    const nextAt = isDelivered(status) || delivery.attempt >= MAX_ATTEMPTS ? null : services.clock() + RETRY_DELAYS_S[delivery.attempt - 1]! * 1000
    await services.storage.recordAttempt(delivery.eventId, delivery.lease, { at, status, error: 'error' in outcome ? outcome.error : null }, nextAt)
  } catch (error) {
    // Unrecorded, the attempt is made again once its lease lapses.
    services.log({ level: 'error', msg: 'webhook delivery not recorded', error: String(error) })
  }
}

/** Starts polling; `stop` waits for the calls out to end and their outcomes to be recorded. */
export function startDeliveries(services: Deps): { stop(): Promise<void> } {
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let round: Promise<void> = Promise.resolve()

  async function poll(): Promise<void> {
    let next = POLL_MS
    try {
      const due = await services.storage.claimDeliveries(services.clock(), LEASE_MS, BATCH)
      await Promise.all(due.map((delivery) => deliver(services, delivery)))
      // A full batch may mean more are due: poll again at once.
      if (due.length === BATCH) next = 0
    } catch (error) {
      services.log({ level: 'error', msg: 'webhook deliveries not claimed', error: String(error) })
      next = ERROR_BACKOFF_MS
    }
    if (!stopped) timer = setTimeout(() => (round = poll()), next)
  }

  timer = setTimeout(() => (round = poll()), POLL_MS)
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await round
    },
  }
}
