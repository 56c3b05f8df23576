/**
 * An in-process sandbox app with an in-memory database and a clock the test moves by hand.
 * Every call shares the network "unknown" (no socket, X-Forwarded-For not trusted), so give each
 * test its own app.
 */
import { expect } from 'bun:test'
import { createApp } from '../../../src/app'
import { loadConfig } from '../../../src/config'
import { createServices } from '../../../src/modules/services'
import { embeddedStorage } from './storage'
import { logLine } from '../../../src/log'

export const START_MS = Date.parse('2026-11-22T10:15:00.000Z')

export async function inProcessApp(env: Record<string, string> = {}) {
  let now = START_MS
  const logs: string[] = []
  const config = loadConfig(env)
  const { storage, db } = await embeddedStorage(config)
  const services = createServices({ storage, config, clock: () => now, log: (fields) => logs.push(logLine(fields)) })
  const app = createApp(services)

  /** POSTs JSON to a sandbox path; `cookie` is the `sbx_session` token to present, if any. */
  async function call(path: string, body?: unknown, options: { cookie?: string; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...options.headers }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (options.cookie !== undefined) headers.cookie = `sbx_session=${options.cookie}`
    const response = await app.handle(
      new Request(`http://localhost/api/sandbox/${path}`, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) }),
    )
    const json = (await response.json()) as any
    return { status: response.status, headers: response.headers, body: json, cookie: sessionCookie(response) }
  }

  return {
    app,
    services,
    /** The database underneath, for tests that look at what was stored. */
    db,
    logs,
    call,
    now: () => now,
    setNow: (ms: number) => void (now = ms),
    advance: (ms: number) => void (now += ms),
  }
}

/** The `sbx_session` value the response sets ('' when it clears it), or undefined. */
function sessionCookie(response: Response): string | undefined {
  for (const line of response.headers.getSetCookie()) {
    const match = /^sbx_session=([^;]*)/.exec(line)
    if (match) return match[1]
  }
  return undefined
}

/** A trip starting `offsetDays` after the fake clock's day. */
export function tripFrom(nowMs: number, offsetDays: number, days: number, origin = 'IN', destination = 'FR') {
  const day = (n: number) => new Date(nowMs + n * 86_400_000).toISOString().slice(0, 10)
  return { origin_country: origin, destination_country: destination, start_date: day(offsetDays), end_date: day(offsetDays + days) }
}

/** A failure as the contract answers it: this status, and this code in the error envelope. */
export function expectFailure(answer: { status: number; body: any }, status: number, code: string): void {
  expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status, code })
}
