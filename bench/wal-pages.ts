/**
 * @module What one policy issue writes to the embedded file's WAL, and where: the sandbox app
 * (`createApp`) answering through `app.handle` on a fresh file with SQLite's checkpoints off, so
 * that every page a commit wrote stays in the WAL to be counted. Each WAL frame names its page;
 * `dbstat` names the table or index that page belongs to.
 *
 *   bun bench/wal-pages.ts [--issues 500] [--src DIR]
 *
 * Prints frames (4 KiB pages) and bytes per issue, and the frames per issue of each table and index,
 * the write-behind's rounds included (they run as they do in the server, every 200 ms).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'

const { values } = parseArgs({ options: { issues: { type: 'string', default: '500' }, src: { type: 'string' } } })
const ISSUES = Number(values.issues)
const SRC = resolve(values.src ?? join(import.meta.dir, '..'), 'src')

const { createApp } = await import(join(SRC, 'app.ts'))
const { loadConfig } = await import(join(SRC, 'config.ts'))
const { createServices } = await import(join(SRC, 'modules/services.ts'))
const { openStorage } = await import(join(SRC, 'storage/index.ts'))
const { openEmbedded } = await import(join(SRC, 'runtime/bun/sqlite.ts'))
const { Database } = await import('bun:sqlite')

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
const trip = { origin_country: 'IN', destination_country: 'FR', start_date: day(30), end_date: day(37) }
const travellers = [{ age: 34 }, { age: 8 }]

const dir = mkdtempSync(join(tmpdir(), 'sandbox-wal-pages-'))
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
const file = join(dir, 'sandbox.db')
const config = loadConfig({ SANDBOX_DB_PATH: file, SANDBOX_RATE_LIMIT: '1000000000' })
const storage = await openStorage(config, (path: string) => {
  const connection = openEmbedded(path)
  connection.exec('PRAGMA wal_autocheckpoint = 0')
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
  const answer = (await response.json()) as any
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer).slice(0, 300)}`)
  // A turn of the event loop, as between a server's requests: the write-behind runs when due.
  await new Promise((done) => setImmediate(done))
  return answer
}

const WAL_HEADER = 32
const FRAME_HEADER = 24
/** The WAL's page size, and the page number of every frame in it, in order. */
function walFrames(): { pageSize: number; pages: number[] } {
  const wal = readFileSync(`${file}-wal`)
  const pageSize = wal.readUInt32BE(8)
  const pages: number[] = []
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize) pages.push(wal.readUInt32BE(at))
  return { pageSize, pages }
}

const plan = (await call('plans/search', { trip, travellers, currency: 'EUR' })).data.plans[0].plan_id
const issue = () => call('policy/new', { plan_id: plan, trip, travellers })
// Untimed first issues: the tables' first pages and the indexes' first levels are written once.
for (let i = 0; i < 200; i++) await issue()
await storage.flush()
const before = walFrames().pages.length
for (let i = 0; i < ISSUES; i++) await issue()
await storage.flush()
const { pageSize, pages } = walFrames()
const frames = pages.slice(before)
await storage.close()

// Which table or index each page is, read from the file as it ends.
const names = new Map<number, string>()
const db = new Database(file, { readonly: true })
for (const row of db.query<{ name: string; pageno: number }, []>('SELECT name, pageno FROM dbstat').all()) names.set(row.pageno, row.name)
db.close()
const perName = new Map<string, number>()
for (const page of frames) {
  const name = names.get(page) ?? '(free or other)'
  perName.set(name, (perName.get(name) ?? 0) + 1)
}

const perIssue = frames.length / ISSUES
const kib = (perIssue * (pageSize + FRAME_HEADER)) / 1024
console.log(`${ISSUES} issues after 200: ${frames.length} WAL frames, ${perIssue.toFixed(2)} an issue (${kib.toFixed(1)} KiB)\n`)
console.log('| table or index | frames per issue |')
console.log('|---|---:|')
for (const [name, count] of [...perName].sort((a, b) => b[1] - a[1])) console.log(`| ${name} | ${(count / ISSUES).toFixed(2)} |`)
