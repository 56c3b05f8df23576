/**
 * @module The HTTP client for the insurer's UAT: a timeout on every attempt, bounded retries with
 * backoff (every call carries an idempotency key, so a retry never issues twice upstream), and a
 * circuit breaker so that a dead insurer is answered for at once instead of waited on.
 */
import { ApiError } from '../../errors'
import type { UatConfig } from '../../config'
import type { Log } from '../../log'
import { circuitBreaker } from './breaker'

/** The insurer refused the request with its own fault code (HTTP 4xx). */
export class InsurerFault extends Error {
  constructor(
    readonly status: number,
    readonly faultCode: string | null,
  ) {
    super(`insurer fault ${status} ${faultCode ?? ''}`)
  }
}

export interface InsurerCall {
  requestId: string
  idempotencyKey: string
}

export interface ClientDeps {
  clock: () => number
  log: Log
  fetch?: typeof fetch
}

const BACKOFF_MS = 50
/** An attempt worth repeating: no answer in time, a reset, a 5xx or 429. */
const RETRY = Symbol('retry')

export function insurerClient(config: UatConfig, deps: ClientDeps) {
  const breaker = circuitBreaker({ failures: config.breakerFailures, cooldownMs: config.breakerCooldownSeconds * 1000, clock: deps.clock })
  const send = deps.fetch ?? fetch

  const unavailable = () => new ApiError('upstream_unavailable', { variant: 'notAnswering', retryAfter: breaker.retryAfter() })

  function invalid(call: InsurerCall, reason: string): ApiError {
    deps.log({ level: 'warn', request_id: call.requestId, msg: 'insurer answer rejected', reason })
    return new ApiError('upstream_invalid')
  }

  /** One attempt: the parsed JSON of a 2xx, an InsurerFault for a 4xx, or RETRY when worth retrying. */
  async function attempt(path: string, body: unknown, call: InsurerCall): Promise<unknown> {
    let response: Response
    let text: string
    try {
      response = await send(`${config.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': call.idempotencyKey, 'x-request-id': call.requestId },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(config.timeoutMs),
      })
      text = await response.text()
    } catch {
      return RETRY
    }
    if (response.status >= 500 || response.status === 429) return RETRY
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw invalid(call, `unparseable answer (HTTP ${response.status})`)
    }
    if (response.status >= 400) {
      const code = (json as { fault?: { code?: unknown } })?.fault?.code
      throw new InsurerFault(response.status, typeof code === 'string' ? code : null)
    }
    if (response.status > 299) throw invalid(call, `unexpected HTTP ${response.status}`)
    return json
  }

  return {
    breaker,
    invalid,
    async post(path: string, body: unknown, call: InsurerCall): Promise<unknown> {
      if (!breaker.allow()) throw unavailable()
      for (let tries = 0; tries <= config.retries; tries++) {
        if (tries > 0) await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS * 2 ** (tries - 1)))
        let answer: unknown
        try {
          answer = await attempt(path, body, call)
        } catch (error) {
          // The insurer answered: it is up, even if what it said is a refusal or nonsense.
          breaker.succeeded()
          throw error
        }
        if (answer !== RETRY) {
          breaker.succeeded()
          return answer
        }
      }
      breaker.failed()
      throw unavailable()
    },
  }
}
