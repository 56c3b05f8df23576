/**
 * @module The request pipeline every sandbox route shares, in the contract's order: route and
 * method (the router); then session expiry and the rate limit (the session guard,
 * modules/session/guard.ts); then `bodyReader`: body size and media type, JSON parse, personal
 * data; then the route's schema validation and handler. Errors from any step become the envelope.
 */
import { randomBytes } from 'node:crypto'
import { Elysia } from 'elysia'
import { ApiError } from '../errors'
import { rejectPersonalData } from '../domain/personal-data'
import type { RateStatus } from '../domain/rate-window'
import type { Services } from '../services'
import { networkKey } from './client-address'
import { failure, rateLimitHeaders, type RequestState } from './envelope'
import { toApiError } from './error-mapping'
import { UnreadableBody, readJsonBody } from './request-body'
import { delayAnswer } from './delay'
import { allowedMethod, loggedMethod, loggedPath, pathOf } from './paths'

/** Header budget: more than any client needs, less than any runtime lets through. */
export const MAX_HEADER_FIELDS = 100
export const MAX_HEADER_BYTES = 16 * 1024

/**
 * `headers_too_large` for a flood the runtime's own parser let through (Node accepts 2000 fields).
 * `Headers` joins repeated names, so this counts distinct names; their values count in the bytes.
 */
function refuseHeaderFloods(headers: Headers): void {
  let fields = 0
  let bytes = 0
  headers.forEach((value, name) => {
    fields++
    bytes += name.length + value.length + 4
  })
  if (fields > MAX_HEADER_FIELDS || bytes > MAX_HEADER_BYTES) {
    throw new ApiError('headers_too_large', `At most ${MAX_HEADER_FIELDS} distinct header names and ${MAX_HEADER_BYTES / 1024} KiB of headers.`)
  }
}

/** Placeholder body: Elysia must not read the stream before the session and rate checks. */
const BODY_DEFERRED = Symbol('body deferred')

/** What the pipeline knows of each request in flight. */
const states = new WeakMap<Request, RequestState>()

/** The state of a request the pipeline has seen. */
export function stateOf(request: Request): RequestState {
  return states.get(request)!
}

export function createPipeline(services: Pick<Services, 'config' | 'clock' | 'storage' | 'insurer' | 'log' | 'peerAddress'>) {
  const { config, clock, storage } = services

  /** The network's allowance for an answer refused before the rate check; unknown when storage fails. */
  async function allowanceOrFull(request: Request): Promise<RateStatus> {
    const now = clock()
    try {
      return await storage.allowance([networkKey(request, services.peerAddress(request), config.trustProxy)], now)
    } catch {
      return { admitted: false, limit: config.rateLimit, remaining: config.rateLimit, resetAt: now }
    }
  }

  return new Elysia({ name: 'sandbox-pipeline' })
    .onRequest(({ request, set }) => {
      const requestId = `req_${randomBytes(12).toString('hex')}`
      states.set(request, { requestId, startedAt: performance.now(), admittedAt: clock(), mode: services.insurer ? 'uat_gateway' : 'simulation', session: null, sessionToken: null, rate: null, delayMs: 0 })
      Object.assign(set.headers, { 'x-request-id': requestId, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })
      refuseHeaderFloods(request.headers)
    })
    .onParse({ as: 'global' }, () => BODY_DEFERRED)
    .onError({ as: 'global' }, async ({ code, error, request, set }) => {
      const state = stateOf(request)
      const path = pathOf(request.url)
      const apiError = toApiError(code, error, path, state.requestId, services.log)
      const rate = state.rate ?? (await allowanceOrFull(request))
      Object.assign(set.headers, rateLimitHeaders(rate, config.rateWindowSeconds, clock()))
      if (apiError.retryAfter !== undefined) set.headers['retry-after'] = String(apiError.retryAfter)
      if (apiError.code === 'method_not_allowed') set.headers.allow = allowedMethod(path)!
      // A client too slow to send its body, declaring one too large to read, or whose body could not
      // be read, gets the connection closed after the answer: what it has not sent or we have not
      // read can never be a request.
      // A chunked body is cut at the limit instead: closing while its chunks still arrive would reset
      // the connection and lose the 413 at the client (seen on Bun under load).
      if (apiError.code === 'request_timeout' || apiError instanceof UnreadableBody
        || (apiError.code === 'payload_too_large' && request.headers.has('content-length'))) {
        set.headers.connection = 'close'
      }
      set.status = apiError.status
      await delayAnswer(state.delayMs, request.signal)
      return failure(state, rate, apiError)
    })
    .onAfterHandle({ as: 'global' }, async ({ request }) => {
      const state = states.get(request)
      if (state) await delayAnswer(state.delayMs, request.signal)
    })
    .onAfterResponse({ as: 'global' }, ({ request, set }) => {
      const state = states.get(request)
      if (!state) return
      services.log({
        request_id: state.requestId,
        method: loggedMethod(request.method),
        path: loggedPath(pathOf(request.url)),
        status: set.status ?? 200,
        duration_ms: Math.round((performance.now() - state.startedAt) * 100) / 100,
        session_ref: state.session?.ref ?? null,
      })
    })
}

/** Reads the body once the session guard has admitted the request, and refuses personal data. */
export const bodyReader = new Elysia({ name: 'sandbox-body' })
  .onTransform({ as: 'global' }, async (context) => {
    const body = await readJsonBody(context.request)
    rejectPersonalData(body)
    context.body = body
  })

