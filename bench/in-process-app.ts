/**
 * @module A checkout's sandbox app in this process: `createApp` answering through `app.handle` on a
 * fresh embedded file, every call from one network, no socket. What bench/in-process.ts times and
 * bench/wal-pages.ts counts.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A date `offset` days from today, as a trip's dates are written. */
export const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
export const trip = { origin_country: 'IN', destination_country: 'FR', start_date: day(30), end_date: day(37) }
export const travellers = [{ age: 34 }, { age: 8 }]
/**
 * The app of the checkout whose `src/` is `src`, on a fresh file; `limit` as SANDBOX_RATE_LIMIT;
 * `tune` runs on the connection once it is open.
 */
export async function inProcessSandbox(src: string, limit: string, tune: (connection: { exec(sql: string): void }) => void = () => {}) {
  const { createApp } = await import(join(src, 'app.ts'))
  const { loadConfig } = await import(join(src, 'config.ts'))
  const { createServices } = await import(join(src, 'modules/services.ts'))
  const { openStorage } = await import(join(src, 'storage/index.ts'))
  const { openEmbedded } = await import(join(src, 'runtime/bun/sqlite.ts'))
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-in-process-'))
  const file = join(dir, 'sandbox.db')
  const config = loadConfig({ SANDBOX_DB_PATH: file, SANDBOX_RATE_LIMIT: limit })
  const storage = await openStorage(config, (path: string) => {
    const connection = openEmbedded(path)
    tune(connection)
    return connection
  })
  const app = createApp(createServices({ storage, config, log: () => {} }))
  let cookie = ''
  async function call(path: string, body: unknown) {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-forwarded-for': '10.9.0.1' }
    if (cookie) headers.cookie = cookie
    const response: Response = await app.handle(new Request(`http://localhost/api/sandbox/${path}`, { method: 'POST', headers, body: JSON.stringify(body) }))
    const set = response.headers.getSetCookie().find((line) => line.startsWith('sbx_session='))
    if (set) cookie = set.split(';')[0]!
    return { status: response.status, body: (await response.json()) as any }
  }
  return {
    call,
    file,
    /** Writes what memory holds (sessions, quotes, rate hits, the request log). */
    flush: (): Promise<void> => storage.flush(),
    close: async () => {
      await storage.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
