/**
 * Helpers for the hardening specs (crash, concurrency, abuse, security, storage faults, logs,
 * shutdown): scratch database files, an HTTP client that carries the session cookie by hand (so
 * that one cookie survives server restarts and can be sent to two processes), raw sockets for what
 * a normal client cannot express, a small HTTP/1.1 response parser, and envelope checks that work
 * on any of those answers.
 */
import { expect, test } from '@playwright/test'
import Database from 'better-sqlite3'
import { randomBytes, randomInt } from 'node:crypto'
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { ERROR_STATUS } from '../../../src/errors'
import { HTTP_PORT, currentTarget, freshDatabasePath } from './server'
import { expectedMode, instancePorts } from './targets'
import { sleep } from '../../support/wait'

export const PATH = {
  session: '/api/sandbox/session',
  search: '/api/sandbox/plans/search',
  issue: '/api/sandbox/policy/new',
  modify: (policyRef: string) => `/api/sandbox/policy/${encodeURIComponent(policyRef)}/modify`,
}

export { sleep }

/**
 * A database path of its own for this target and this run. The suite may run twice at once (two
 * helpers, two port ranges), so the name carries a random part; `removeDatabase` cleans up.
 */
export function scratchDatabase(name: string): string {
  return freshDatabasePath(`${name}-${currentTarget()}-${randomBytes(4).toString('hex')}`)
}

export function removeDatabase(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true })
}

/** Size of the -wal file, or null when there is none. */
export function walSize(path: string): number | null {
  return existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : null
}

/** Opens the database read-only (better-sqlite3: Playwright runs under Node) for a query or two. */
export function readDatabase<T>(path: string, work: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true })
  try {
    db.pragma('busy_timeout = 5000')
    return work(db)
  } finally {
    db.close()
  }
}

/** A random IPv6 /64 from the documentation prefix: a client network no other call uses. */
export function uniqueNetwork(): string {
  const group = () => randomInt(0x10000).toString(16)
  return `2001:db8:${group()}:${group()}::1`
}

/** A trip starting `offsetDays` from today (UTC), lasting `days` days. */
export function tripFrom(offsetDays: number, days: number, origin = 'IN', destination = 'FR') {
  const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10)
  return { origin_country: origin, destination_country: destination, start_date: day(offsetDays), end_date: day(offsetDays + days) }
}

export interface Reply {
  status: number
  headers: Headers
  text: string
  /** The parsed body, or undefined when it is not JSON. */
  json: any
  /** The `sbx_session` value a response sets ('' when it clears it). */
  token: string | undefined
  setCookies: string[]
}

export interface CallOptions {
  /** A JSON body; a string or Buffer is sent as is (with Content-Type: application/json). */
  body?: unknown
  /** The `sbx_session` token to present. */
  cookie?: string
  /** X-Forwarded-For (the test servers trust one proxy hop). */
  network?: string
  headers?: Record<string, string>
  method?: string
  timeoutMs?: number
}

/**
 * One call over a connection of its own (node:http, no keep-alive pool: a pooled connection the
 * server has just closed would fail for reasons that are not the test's). Rejects only when no HTTP
 * answer arrives (connection refused or reset, or the deadline).
 */
export function call(baseUrl: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers }
  let body: string | Buffer | undefined
  if (options.body !== undefined) {
    body = typeof options.body === 'string' || Buffer.isBuffer(options.body) ? options.body : JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
    headers['content-length'] = String(Buffer.byteLength(body))
  }
  if (options.cookie !== undefined) headers.cookie = `sbx_session=${options.cookie}`
  if (options.network !== undefined) headers['x-forwarded-for'] = options.network
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${baseUrl}${path}`, { method: options.method ?? 'POST', headers, agent: false }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: any
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
        const responseHeaders = new Headers()
        for (let index = 0; index < response.rawHeaders.length; index += 2) {
          responseHeaders.append(response.rawHeaders[index]!, response.rawHeaders[index + 1]!)
        }
        const setCookies = responseHeaders.getSetCookie()
        const token = setCookies.map((line) => /^sbx_session=([^;]*)/.exec(line)?.[1]).find((value) => value !== undefined)
        resolve({ status: response.statusCode!, headers: responseHeaders, text, json, token, setCookies })
      })
    })
    request.setTimeout(options.timeoutMs ?? 15_000, () => request.destroy(new Error(`no answer within ${options.timeoutMs ?? 15_000} ms`)))
    request.on('error', reject)
    request.end(body)
  })
}

/** A 200 success envelope; answers `data`. */
export function expectOk(reply: Reply): any {
  expect(reply.status, reply.text).toBe(200)
  expect(reply.json?.ok, reply.text).toBe(true)
  expect(reply.json.mode).toBe(expectedMode(currentTarget()))
  expect(reply.json.request_id).toMatch(/^req_[0-9a-f]+$/)
  return reply.json.data
}

/** Any text a client must never see in an error: stack frames, source paths, driver codes. */
export const LEAK_PATTERNS = [
  /\n\s*at\s/,
  /\bat\s+\S+\s+\(/,
  /(?:[A-Za-z]:)?(?:[\\/][\w.@-]+)+\.(?:ts|js|mjs|cjs)\b/,
  /node_modules/,
  /\/(?:work|home|tmp|usr|src)\//,
  /\bstack\b/i,
  /SQLITE_/i,
  /database is locked/i,
]

type Answer = { status: number; header: (name: string) => string | undefined; text: string }

/**
 * What is wrong with an answer that should be an error envelope (spec 2.1, CONTRACT "Envelope and
 * errors"): the code is a contract code with its status, and nothing leaks. Plain checks, no
 * `expect` (Playwright's is slow when called thousands of times); empty when all is well.
 */
export function envelopeProblems(answer: Answer, status?: number, code?: string): string[] {
  const problems: string[] = []
  const where = `HTTP ${answer.status}: ${answer.text.slice(0, 300)}`
  let body: any
  try {
    body = JSON.parse(answer.text)
  } catch {
    return [`not an error envelope: ${where}`]
  }
  const check = (ok: boolean, what: string) => void (ok || problems.push(`${what} (${where})`))
  check(body !== null && typeof body === 'object' && body.ok === false, 'ok is false')
  if (problems.length > 0) return problems
  check(Object.keys(body).sort().join() === 'error,meta,mode,ok,request_id', 'exactly ok, mode, request_id, error, meta')
  check(body.mode === expectedMode(currentTarget()), `mode ${expectedMode(currentTarget())}`)
  check(/^req_[0-9a-f]+$/.test(body.request_id), 'request_id req_<hex>')
  check(answer.header('x-request-id') === body.request_id, 'X-Request-Id equals request_id')
  check(body.meta?.sandbox === true, 'meta.sandbox true')
  check(typeof body.meta?.rate_limit?.limit === 'number', 'meta.rate_limit present')
  check(Object.hasOwn(ERROR_STATUS, body.error?.code), 'error.code from the contract list')
  check(ERROR_STATUS[body.error?.code as keyof typeof ERROR_STATUS] === answer.status, "the code's own HTTP status")
  if (status !== undefined) check(answer.status === status, `status ${status}`)
  if (code !== undefined) check(body.error?.code === code, `code ${code}`)
  for (const pattern of LEAK_PATTERNS) check(!pattern.test(answer.text), `nothing matching ${pattern}`)
  return problems
}

/** Asserts an error envelope (see `envelopeProblems`); answers its `error`. */
export function expectErrorEnvelope(answer: Answer, status?: number, code?: string): { code: string; message: string; details?: { field: string; issue: string }[] } {
  expect(envelopeProblems(answer, status, code)).toEqual([])
  return JSON.parse(answer.text).error
}

/** `envelopeProblems` for a `call` reply. */
export const replyProblems = (reply: Reply, status?: number, code?: string) =>
  envelopeProblems({ status: reply.status, header: (name) => reply.headers.get(name) ?? undefined, text: reply.text }, status, code)

/** `expectErrorEnvelope` for a `call` reply. */
export function expectError(reply: Reply, status?: number, code?: string) {
  return expectErrorEnvelope({ status: reply.status, header: (name) => reply.headers.get(name) ?? undefined, text: reply.text }, status, code)
}

// ---------------------------------------------------------------------------------------------
// Raw sockets

export interface RawResult {
  /** Every byte the server sent. */
  bytes: Buffer
  /** How the exchange ended: the server closed (or reset) the connection, or our deadline passed. */
  ended: 'closed' | 'reset' | 'deadline'
  /** Milliseconds from connecting to the end. */
  ms: number
  /** The HTTP responses found in `bytes`. */
  responses: HttpAnswer[]
}

export interface HttpAnswer {
  status: number
  headers: Record<string, string>
  text: string
}

/** A piece of what to send: bytes, or a pause. */
export type Piece = string | Buffer | { pause: number }

export interface RawOptions {
  /** Give up (and close our side) after this long. */
  deadlineMs: number
  /** Stop waiting as soon as this many complete responses arrived. */
  responses?: number
  /** Called once connected, with a function that writes more later (for shutdown tests). */
  onConnect?: (write: (piece: string | Buffer) => void) => void
}

/** Connects to 127.0.0.1:port, sends `pieces` in order (pauses included) and collects the answer. */
export function rawExchange(port: number, pieces: Piece[], options: RawOptions): Promise<RawResult> {
  return new Promise((resolve) => {
    const started = Date.now()
    const socket = connect(port, '127.0.0.1')
    let bytes = Buffer.alloc(0)
    let finished = false
    const finish = (ended: RawResult['ended']) => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ bytes, ended, ms: Date.now() - started, responses: parseResponses(bytes) })
    }
    const timer = setTimeout(() => finish('deadline'), options.deadlineMs)
    socket.on('data', (chunk) => {
      bytes = Buffer.concat([bytes, chunk])
      if (options.responses !== undefined && parseResponses(bytes).length >= options.responses) finish('closed')
    })
    socket.on('end', () => finish('closed'))
    socket.on('close', () => finish('closed'))
    socket.on('error', (error: NodeJS.ErrnoException) => finish(error.code === 'ECONNRESET' || error.code === 'EPIPE' ? 'reset' : 'closed'))
    socket.on('connect', async () => {
      options.onConnect?.((piece) => {
        if (!finished && socket.writable) socket.write(piece)
      })
      for (const piece of pieces) {
        if (finished) return
        if (typeof piece === 'object' && !Buffer.isBuffer(piece)) await sleep(piece.pause)
        else if (socket.writable) socket.write(piece)
      }
    })
  })
}

/** The complete HTTP/1.1 responses at the start of `bytes` (Content-Length or chunked bodies). */
export function parseResponses(bytes: Buffer): HttpAnswer[] {
  const answers: HttpAnswer[] = []
  let at = 0
  for (;;) {
    const headEnd = bytes.indexOf('\r\n\r\n', at)
    if (headEnd < 0) return answers
    const [statusLine = '', ...lines] = bytes.subarray(at, headEnd).toString('latin1').split('\r\n')
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1])
    if (!status) return answers
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    let bodyStart = headEnd + 4
    let body: Buffer
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const parts: Buffer[] = []
      for (;;) {
        const sizeEnd = bytes.indexOf('\r\n', bodyStart)
        if (sizeEnd < 0) return answers
        const size = parseInt(bytes.subarray(bodyStart, sizeEnd).toString('latin1'), 16)
        if (Number.isNaN(size) || bytes.length < sizeEnd + 2 + size + 2) return answers
        parts.push(bytes.subarray(sizeEnd + 2, sizeEnd + 2 + size))
        bodyStart = sizeEnd + 2 + size + 2
        if (size === 0) break
      }
      body = Buffer.concat(parts)
    } else {
      const length = Number(headers['content-length'] ?? 0)
      if (bytes.length < bodyStart + length) return answers
      body = bytes.subarray(bodyStart, bodyStart + length)
      bodyStart += length
    }
    answers.push({ status, headers, text: body.toString('utf8') })
    at = bodyStart
  }
}

/** `expectErrorEnvelope` for a raw answer. */
export function expectRawError(answer: HttpAnswer, status?: number, code?: string) {
  return expectErrorEnvelope({ status: answer.status, header: (name) => answer.headers[name.toLowerCase()], text: answer.text }, status, code)
}

/** The request line and headers of a POST, ready to send (the body follows). */
export function rawHead(path: string, headers: Record<string, string | number>, host = '127.0.0.1'): string {
  const lines = [`POST ${path} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)]
  return `${lines.join('\r\n')}\r\n\r\n`
}

/** The port of a server URL such as http://127.0.0.1:4321. */
/**
 * The port a raw connection goes to: the sandbox server itself. The `pg` project's base URL is the
 * test balancer in front of its two instances, whose own HTTP parser would then be the one tested:
 * there, raw exchanges go to the first instance.
 */
export function portOf(url: string): number {
  const port = Number(new URL(url).port)
  const balancer = currentTarget() === 'pg' && url === test.info().project.use.baseURL
  return balancer ? instancePorts(HTTP_PORT)[0] : port
}

/** Every byte of the database file and its -wal and -shm companions, as one buffer. */
export function databaseBytes(path: string): Buffer {
  return Buffer.concat(['', '-wal', '-shm'].filter((suffix) => existsSync(path + suffix)).map((suffix) => readFileSync(path + suffix)))
}
