/**
 * @module Webhook deliveries: every process polls for due deliveries, claims a few (the storage's
 * lease: one process or instance per attempt), sends each signed, and records the outcome with the
 * time of the next attempt. Deliveries are rows, so a restart resumes them; no lock, transaction or
 * connection is held while a call is out.
 */
import type { Services } from '../../services'
import type { Delivery } from '../../storage/storage'
import { CALL_TIMEOUT_MS, postJson } from './outbound'
import { signatureHeader } from './signature'

/** Seconds before each attempt after the first: 6 attempts over about 12.5 minutes. */
export const RETRY_DELAYS_S = [1, 5, 30, 120, 600]
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1
/** Longer than any call, so a claim lapses only when its process is gone. */
const LEASE_MS = CALL_TIMEOUT_MS * 2
const POLL_MS = 200
const BATCH = 20

type Deps = Pick<Services, 'storage' | 'clock' | 'config' | 'log'>

/** Sends one claimed delivery and records how it went. */
async function deliver(services: Deps, delivery: Delivery): Promise<void> {
  const at = services.clock()
  const outcome = await postJson(delivery.webhook.url, delivery.body, {
    'sandbox-signature': signatureHeader(delivery.webhook.secret, Math.floor(at / 1000), delivery.body),
    'sandbox-event-id': delivery.ref,
    'sandbox-event-type': delivery.type,
    'user-agent': 'travel-protection-sandbox-webhooks',
  }, services.config.webhookTargets)
  const status = 'status' in outcome ? outcome.status : null
  const delivered = status !== null && status >= 200 && status < 300
  const nextAt = delivered || delivery.attempt >= MAX_ATTEMPTS ? null : services.clock() + RETRY_DELAYS_S[delivery.attempt - 1]! * 1000
  await services.storage.recordAttempt(delivery.eventId, { at, status, error: 'error' in outcome ? outcome.error : null }, nextAt)
}

/** Starts polling; `stop` waits for the calls out to end and their outcomes to be recorded. */
export function startDeliveries(services: Deps): { stop(): Promise<void> } {
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let round: Promise<void> = Promise.resolve()

  async function poll(): Promise<void> {
    let claimed = 0
    try {
      const due = await services.storage.claimDeliveries(services.clock(), LEASE_MS, BATCH)
      claimed = due.length
      await Promise.all(due.map((delivery) => deliver(services, delivery)))
    } catch (error) {
      services.log({ level: 'error', msg: 'webhook deliveries failed', error: String(error) })
    }
    // A full batch may mean more are due: poll again at once.
    if (!stopped) timer = setTimeout(() => (round = poll()), claimed === BATCH ? 0 : POLL_MS)
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
