/**
 * @module The first step of every sandbox call: its request id and state, the headers every
 * answer carries, and the header budget.
 */
import { randomUUID } from 'node:crypto'
import { Elysia } from 'elysia'
import type { Server } from 'elysia/universal'
import type { Config } from '../../config'
import { ApiError } from '../../errors'
import { networkKey } from '../client-address'
import { beginRequest, type Mode } from '../request-state'

/** Header budget: more than any client needs, less than any runtime lets through. */
export const MAX_HEADER_FIELDS = 100
export const MAX_HEADER_BYTES = 16 * 1024

/** How the runtime serving the app tells a request's socket peer (server*.ts). */
export type PeerAddress = (request: Request, server: Server | null) => string | undefined

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
    throw new ApiError('headers_too_large', { values: { maxNames: MAX_HEADER_FIELDS, maxKiB: MAX_HEADER_BYTES / 1024 } })
  }
}

export interface RequestStartDeps {
  config: Pick<Config, 'trustProxy'>
  clock: () => number
  /** What answers this sandbox's plans and policies, until a step learns otherwise. */
  mode: Mode
  peerAddress: PeerAddress
}

export function requestStart({ config, clock, mode, peerAddress }: RequestStartDeps) {
  return new Elysia({ name: 'sandbox-request-start' }).onRequest(({ request, set, server }) => {
    const requestId = `req_${randomUUID().replaceAll('-', '')}`
    beginRequest(request, {
      requestId,
      startedAt: performance.now(),
      network: networkKey(request, () => peerAddress(request, server), config.trustProxy),
      admittedAt: clock(),
      mode,
      session: null,
      sessionToken: null,
      implicitSession: null,
      rate: null,
      delayMs: 0,
    })
    Object.assign(set.headers, { 'x-request-id': requestId, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })
    refuseHeaderFloods(request.headers)
  })
}
