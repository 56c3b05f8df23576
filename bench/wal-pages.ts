/**
 * @module What one policy issue writes to the embedded file's WAL, and where: the sandbox app
 * (`createApp`) answering through `app.handle` on a fresh file with SQLite's checkpoints off, so
 * that every page a commit wrote stays in the WAL to be counted. Each WAL frame names its page;
 * `dbstat` names the table or index that page belongs to.
 *
 *   bun bench/wal-pages.ts [--issues 500] [--before 200] [--src DIR]
 *
 * Prints frames (4 KiB pages) and bytes per issue, and the frames per issue of each table and index,
 * the write-behind's rounds included (they run as they do in the server, every 200 ms). Also the
 * distinct pages among those frames: what a checkpoint of them copies back into the file and
 * flushes. Random keys spread over an index that `--before` issues made large touch a leaf each,
 * where keys in time order share the last one.
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Database } from 'bun:sqlite'
import { inProcessSandbox, travellers, trip } from './in-process-app'

const { values } = parseArgs({ options: { issues: { type: 'string', default: '500' }, before: { type: 'string', default: '200' }, src: { type: 'string' } } })
const ISSUES = Number(values.issues)
const BEFORE = Number(values.before)
const SRC = resolve(values.src ?? join(import.meta.dir, '..'), 'src')

const sandbox = await inProcessSandbox(SRC, '1000000000', (connection) => connection.exec('PRAGMA wal_autocheckpoint = 0'))
async function call(path: string, body: unknown) {
  const answer = await sandbox.call(path, body)
  if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`)
  // A turn of the event loop, as between a server's requests: the write-behind runs when due.
  await new Promise((done) => setImmediate(done))
  return answer.body
}

const WAL_HEADER = 32
const FRAME_HEADER = 24
/** The WAL's page size, and the page number of every frame in it, in order. */
function walFrames(): { pageSize: number; pages: number[] } {
  const wal = readFileSync(`${sandbox.file}-wal`)
  const pageSize = wal.readUInt32BE(8)
  const pages: number[] = []
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize) pages.push(wal.readUInt32BE(at))
  return { pageSize, pages }
}

/** The frames of `ISSUES` issues after `BEFORE` first (the tables' first pages and the indexes' first levels), and the page size. */
async function issuesFrames(): Promise<{ pageSize: number; frames: number[]; names: Map<number, string> }> {
  const plan = (await call('plans/search', { trip, travellers, currency: 'EUR' })).data.plans[0].plan_id
  const issue = () => call('policy/new', { plan_id: plan, trip, travellers })
  for (let i = 0; i < BEFORE; i++) await issue()
  await sandbox.flush()
  const before = walFrames().pages.length
  for (let i = 0; i < ISSUES; i++) await issue()
  await sandbox.flush()
  const { pageSize, pages } = walFrames()
  // Which table or index each page is, as the file (and its WAL) ends.
  const names = new Map<number, string>()
  const db = new Database(sandbox.file, { readonly: true })
  for (const row of db.query<{ name: string; pageno: number }, []>('SELECT name, pageno FROM dbstat').all()) names.set(row.pageno, row.name)
  db.close()
  return { pageSize, frames: pages.slice(before), names }
}

const { pageSize, frames, names } = await issuesFrames().finally(sandbox.close)
const perName = new Map<string, { frames: number; pages: number }>()
const countsOf = (page: number) => {
  const name = names.get(page) ?? '(free or other)'
  if (!perName.has(name)) perName.set(name, { frames: 0, pages: 0 })
  return perName.get(name)!
}
for (const page of frames) countsOf(page).frames++
const distinct = new Set(frames)
for (const page of distinct) countsOf(page).pages++

const perIssue = frames.length / ISSUES
const kib = (perIssue * (pageSize + FRAME_HEADER)) / 1024
console.log(
  `${ISSUES} issues after ${BEFORE}: ${frames.length} WAL frames, ${perIssue.toFixed(2)} an issue (${kib.toFixed(1)} KiB); ${distinct.size} distinct pages\n`,
)
console.log('| table or index | frames per issue | distinct pages |')
console.log('|---|---:|---:|')
for (const [name, { frames, pages }] of [...perName].sort((a, b) => b[1].frames - a[1].frames)) {
  console.log(`| ${name} | ${(frames / ISSUES).toFixed(2)} | ${pages} |`)
}
