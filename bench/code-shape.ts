/**
 * @module The code's shape in figures, to compare two checkouts (issue 33): lines of the SQLite
 * engine, the longest functions of src/, and the files of src/ whose code a plan search and a policy
 * issue run (Bun's line coverage of one in-process app: a file counts when a line of it runs more
 * often with the requests than without).
 *
 *   bun bench/code-shape.ts [--src DIR]
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Glob } from 'bun'
import type * as TypeScript from '../test/tools/node_modules/typescript/lib/typescript'

const { values } = parseArgs({ options: { src: { type: 'string' } } })
const ROOT = resolve(values.src ?? join(import.meta.dir, '..'))
const SRC = join(ROOT, 'src')
// TypeScript 7 has no compiler API; the 5.x the generator tests install has.
const ts = (await import(join(import.meta.dir, '../test/tools/node_modules/typescript/lib/typescript.js'))).default as typeof TypeScript

function lines(file: string): number {
  return readFileSync(file, 'utf8').split('\n').length - 1
}

function sqliteLines(): { files: number; lines: number } {
  const dir = join(SRC, 'storage/sqlite')
  const files = readdirSync(dir).filter((name) => name.endsWith('.ts'))
  return { files: files.length, lines: files.reduce((sum, name) => sum + lines(join(dir, name)), 0) }
}

/** Every function of src/ (declarations, methods, arrows, function expressions) with its length in lines. */
function functionLengths(): { name: string; lines: number }[] {
  const found: { name: string; lines: number }[] = []
  for (const path of new Glob('**/*.ts').scanSync(SRC)) {
    const text = readFileSync(join(SRC, path), 'utf8')
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
    const visit = (node: TypeScript.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const start = source.getLineAndCharacterOfPosition(node.getStart()).line
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
        const named = (node as { name?: TypeScript.Node }).name
        const parent = node.parent && ts.isVariableDeclaration(node.parent) ? node.parent.name : undefined
        found.push({ name: `${path}:${start + 1} ${(named ?? parent)?.getText() ?? '(anonymous)'}`, lines: end - start + 1 })
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
  return found.sort((a, b) => b.lines - a.lines)
}

/** The probe: one in-process app on `:memory:`, a session, then `N` times the path's request. */
const PROBE = `
import { test } from 'bun:test'
import { existsSync } from 'node:fs'
const SRC = ${JSON.stringify(SRC)}
const driver = ['runtime/bun/sqlite.ts', 'storage/drivers/bun.ts'].map((path) => SRC + '/' + path).find((path) => existsSync(path))
const { createApp } = await import(SRC + '/app.ts')
const { loadConfig } = await import(SRC + '/config.ts')
const { createServices } = await import(SRC + '/modules/services.ts')
const { openStorage } = await import(SRC + '/storage/index.ts')
const { openEmbedded } = await import(driver)
const day = (offset) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
const trip = { origin_country: 'IN', destination_country: 'FR', start_date: day(30), end_date: day(37) }
const travellers = [{ age: 34 }]
test('probe', async () => {
  const config = loadConfig({ SANDBOX_DB_PATH: ':memory:' })
  const app = createApp(createServices({ storage: await openStorage(config, (path) => openEmbedded(path)), config, log: () => {} }))
  let cookie = ''
  const call = async (path, body) => {
    const response = await app.handle(new Request('http://localhost/api/sandbox/' + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(cookie && { cookie }) }, body: JSON.stringify(body) }))
    cookie ||= response.headers.getSetCookie()[0]?.split(';')[0] ?? ''
    const answer = await response.json()
    if (!answer.ok) throw new Error(JSON.stringify(answer))
    return answer.data
  }
  const plan = (await call('plans/search', { trip, travellers })).plans[0].plan_id
  for (let i = 0; i < Number(process.env.N); i++) {
    if (process.env.PROBE === 'search') await call('plans/search', { trip, travellers })
    else await call('policy/new', { plan_id: plan, trip, travellers })
  }
})
`

/** Per file of src/, per line, how often it ran in the probe with `n` requests. */
function coverage(probe: string, n: number): Map<string, Map<number, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'code-shape-'))
  try {
    const file = join(dir, 'probe.test.ts')
    Bun.write(file, PROBE)
    const run = spawnSync(process.execPath, ['test', '--coverage', '--coverage-reporter=lcov', '--coverage-dir', dir, file], {
      cwd: ROOT,
      env: { ...process.env, N: String(n), PROBE: probe },
      encoding: 'utf8',
    })
    if (run.status !== 0) throw new Error(run.stderr)
    const counts = new Map<string, Map<number, number>>()
    let current: Map<number, number> | undefined
    for (const line of readFileSync(join(dir, 'lcov.info'), 'utf8').split('\n')) {
      if (line.startsWith('SF:')) counts.set(relative(SRC, resolve(ROOT, line.slice(3))), (current = new Map()))
      else if (line.startsWith('DA:') && current) {
        const [at, count] = line.slice(3).split(',').map(Number)
        current.set(at!, count!)
      }
    }
    return counts
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The files of src/ with a line that runs more often with 3 requests than with none. */
function touched(probe: string): string[] {
  const without = coverage(probe, 0)
  const with3 = coverage(probe, 3)
  return [...with3]
    .filter(([file, counts]) => !file.startsWith('..') && [...counts].some(([at, count]) => count > (without.get(file)?.get(at) ?? 0)))
    .map(([file]) => file)
    .sort()
}

if (!existsSync(SRC)) throw new Error(`no src/ in ${ROOT}`)
const sqlite = sqliteLines()
console.log(`# Code shape of ${ROOT}\n`)
console.log(`src/storage/sqlite: ${sqlite.lines} lines in ${sqlite.files} files\n`)
console.log('Longest functions of src/ (lines):')
for (const { name, lines } of functionLengths().slice(0, 5)) console.log(`  ${lines}  ${name}`)
for (const probe of ['search', 'issue']) {
  const files = touched(probe)
  console.log(`\nFiles a ${probe === 'search' ? 'plan search' : 'policy issue'} runs: ${files.length}`)
  console.log(`  ${files.join(', ')}`)
}
