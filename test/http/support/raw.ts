/**
 * Raw sockets, for what a normal client cannot express (a body that never ends, a header flood, a
 * byte at a time), and a small HTTP/1.1 response parser. Answers pass the client's assertions
 * (`expectError` in client.ts takes an `HttpAnswer`).
 */
import { test } from '@playwright/test'
import { connect } from 'node:net'
import { sleep } from '../../support/wait'
import type { HttpAnswer } from './client'
import { HTTP_PORT, currentTarget } from './server'
import { instancePorts } from './targets'

export type { HttpAnswer }

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

/** The request line and headers of a POST, ready to send (the body follows). */
export function rawHead(path: string, headers: Record<string, string | number>, host = '127.0.0.1'): string {
  const lines = [`POST ${path} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)]
  return `${lines.join('\r\n')}\r\n\r\n`
}

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
