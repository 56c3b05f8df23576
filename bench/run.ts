/**
 * @module The benchmark (`npm run bench`): the cost ladder from a bare Bun.serve to the sandbox's plan
 * search, the other paths (issue, modify, the 429 path) and deploy targets against the same raw
 * ceiling, latency at half the measured maximum, scale (RSS, a 100,000-session sweep, cold start),
 * PostgreSQL with one and two instances, and PASS/MISS per target. Prints Markdown
 * and writes it to bench/results.md (bench/README.md says how to read it).
 * Needs `wrk` (Debian: `apt-get install -y wrk`) and, for the binary/Deno/Node rows and the cold
 * start, `npm run build`.
 *
 *   bun bench/run.ts [--duration 10] [--warmup 2] [--connections 16] [--sessions 100000] [--quick]
 *                    [--only ladder,c,d,e,f,g,pg,scale] [--src DIR]
 *
 *   --quick   skip the scale figures (seeding, RSS, sweep, cold start)
 *   --only    run only these parts; the targets of the others say n/a (ratios need `ladder`)
 *   --src DIR run the sandbox rows from another checkout's src/runtime/bun/server.ts (compare a branch)
 *
 * Where the parts live: options.ts (arguments), test/support/launch.ts (a server process) and
 * test/support/embedded-postgres.ts (shared with the tests), processes.ts (servers, cleanup, /proc), load.ts (wrk,
 * constant rate), measure.ts (one row), floor.ts (the client's floor), ladder.ts + ladder-server.ts, bodies.ts,
 * postgres.ts, scale.ts, goals.ts (targets, PASS/MISS), report.ts (tables).
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { bodyCost } from './bodies'
import { withFloor } from './floor'
import type { Results } from './goals'
import { runLadder } from './ladder'
import { isBuilt, runtimeCommand } from '../test/support/launch'
import { WRK } from './load'
import { measure, searchAnswerFile, type AtRate, type Bench, type Row } from './measure'
import { parseOptions, wanted, type Options } from './options'
import { runPostgres } from './postgres'
import { BUN, PIN, ROOT, loadAverage, machineTicks, openHarness } from './processes'
import { report } from './report'
import { runScale } from './scale'

/** The sandbox's Bun entry: this checkout's, or `--src`'s. */
function sandboxCommand(options: Options): string[] {
  const entry = options.src ? join(resolve(options.src), 'src/runtime/bun/server.ts') : 'src/runtime/bun/server.ts'
  if (!existsSync(resolve(ROOT, entry))) throw new Error(`--src ${options.src}: no src/runtime/bun/server.ts there`)
  return [BUN, entry]
}

/**
 * The c0 and d0 rows: the same path with its database on tmpfs, so that a missed share tells the
 * disk's part from the rest of the path's. Not `:memory:`: there SQLite's commit grows with the
 * database (3.5 µs at 20,000 rows, 48 µs at 100,000; bench/findings.md).
 */
async function onTmpfs(bench: Bench, sandbox: string[], row: Row): Promise<Row> {
  let dir: string
  try {
    dir = bench.harness.scratchDir('/dev/shm')
  } catch (error) {
    return { ...row, skipped: `no tmpfs: ${String(error).split('\n')[0]}` }
  }
  try {
    return await measure(bench, row, sandbox, { SANDBOX_DB_PATH: join(dir, `${row.key}.db`) })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A row at half its rate (or a fixed one) with its floor. */
const withRate = async (bench: Bench, row: Row, command: string[], atRate: AtRate = 'half', env: Record<string, string> = {}) =>
  withFloor(bench, await measure(bench, row, command, env, atRate))

/** The fixed rate of the issue row that no machine's speed decides (issue 36): a third of a core. */
const FIXED_ISSUE_RATE = 400

/**
 * Issue, modify and the 429 path on the Bun source; then the built deploy targets: plan search on
 * each, and issue and modify on the binary, each also at half its rate.
 */
async function runPaths(bench: Bench, sandbox: string[], label: string): Promise<Row[]> {
  const { options } = bench
  const rows: Row[] = []
  if (wanted(options, 'c')) {
    rows.push(await withRate(bench, { key: 'c', label: 'policy issue', server: label, mode: 'issue' }, sandbox))
    rows.push(await withRate(bench, { key: 'c400', label: 'policy issue, fixed rate', server: label, mode: 'issue' }, sandbox, FIXED_ISSUE_RATE))
    rows.push(await onTmpfs(bench, sandbox, { key: 'c0', label: 'policy issue, database on tmpfs (no disk)', server: label, mode: 'issue' }))
  }
  if (wanted(options, 'd')) {
    rows.push(await withRate(bench, { key: 'd', label: 'modify (extend/shorten, 20 per policy)', server: label, mode: 'modify' }, sandbox))
    rows.push(await onTmpfs(bench, sandbox, { key: 'd0', label: 'modify, database on tmpfs (no disk)', server: label, mode: 'modify' }))
  }
  if (wanted(options, 'e'))
    rows.push(
      await measure(bench, { key: 'e', label: '429 path (limit 30, one network)', server: label, mode: 'limited' }, sandbox, { SANDBOX_RATE_LIMIT: '30' }),
    )
  if (!wanted(options, 'f')) return rows
  const targets = [
    { key: 'f1', runtime: 'binary', label: 'plan search', mode: 'search' },
    { key: 'f1c', runtime: 'binary', label: 'policy issue', mode: 'issue' },
    { key: 'f1d', runtime: 'binary', label: 'modify (extend/shorten, 20 per policy)', mode: 'modify' },
    { key: 'f2', runtime: 'deno', label: 'plan search', mode: 'search' },
    { key: 'f3', runtime: 'node', label: 'plan search', mode: 'search' },
  ] as const
  for (const { key, runtime, label: name, mode } of targets) {
    const row: Row = { key, label: name, server: runtime === 'binary' ? 'binary' : `${runtime} bundle`, mode }
    if (!isBuilt(runtime)) rows.push({ ...row, skipped: 'not built (npm run build)' })
    else rows.push(await withRate(bench, row, runtimeCommand(runtime)))
  }
  // Each runtime's own ceiling: how much of the gap to Bun is its HTTP server (docs/operations.md).
  const answer = searchAnswerFile(bench)
  const body: Record<string, string> = existsSync(answer) ? { BENCH_BODY_FILE: answer } : {}
  const rawHttp = join(import.meta.dir, 'raw-http.mjs')
  rows.push(
    await measure(
      bench,
      { key: 'f2r', label: 'raw Deno.serve, fixed answer (Deno ceiling)', server: 'deno', mode: 'search' },
      ['deno', 'run', '--allow-net', '--allow-env', '--allow-read', rawHttp],
      body,
    ),
    await measure(bench, { key: 'f3r', label: 'raw node:http, fixed answer (Node ceiling)', server: 'node', mode: 'search' }, ['node', rawHttp], body),
  )
  return rows
}

async function main(options: Options): Promise<void> {
  const begun = performance.now()
  const start = loadAverage()
  const ticks = machineTicks()
  const harness = openHarness()
  const bench: Bench = { harness, options, log: (line) => console.error(line) }
  const sandbox = sandboxCommand(options)
  const label = options.src ? `bun ${options.src}` : 'bun src'
  bench.log(
    `bench: ${options.duration} s runs, ${options.warmup} s warm-up, ${options.connections} connections; ` +
      `${PIN ? 'server on core 1, load on core 0 (taskset)' : 'no pinning'}; load average ${start}`,
  )
  try {
    const results: Results = {
      ladder: wanted(options, 'ladder') ? await runLadder(bench, sandbox, label) : [],
      paths: await runPaths(bench, sandbox, label),
      bodies: wanted(options, 'g') ? await bodyCost(bench, sandbox) : null,
      postgres: wanted(options, 'pg') ? await runPostgres(bench, sandbox) : null,
      scale: wanted(options, 'scale')
        ? await runScale({
            sessions: options.sessions,
            serverCommand: sandbox,
            log: (line) => bench.log(`  ${line}`),
            startSandbox: (server) => harness.startServer(server),
            scratch: existsSync('/dev/shm') ? '/dev/shm' : harness.work,
            dir: harness.work,
          })
        : null,
    }
    const ended = machineTicks()
    const stolen = (ended.stolen - ticks.stolen) / (ended.total - ticks.total)
    const markdown = report(results, options, { start, end: loadAverage(), stolen }, performance.now() - begun)
    console.log(`\n${markdown}`)
    const command = `bun bench/run.ts ${process.argv.slice(2).join(' ')}`.trim()
    const written =
      `Written by \`${command}\` (\`npm run bench\` runs it) at ${new Date().toISOString().slice(0, 16)}Z, replacing the previous ` +
      'results; how to read them: [README](README.md).'
    writeFileSync(join(ROOT, 'bench', 'results.md'), `# Benchmark results\n\n${written}\n\n${markdown}\n`)
    bench.log('bench: wrote bench/results.md')
  } finally {
    harness.cleanup()
  }
}

if (import.meta.main) {
  const options = parseOptions(process.argv.slice(2))
  if (typeof options === 'string') {
    console.error(options)
    process.exit(2)
  }
  // Row g and the scale run send their requests themselves.
  if (!WRK && !(options.only && [...options.only].every((part) => part === 'g' || part === 'scale'))) {
    console.error('bench: wrk is not installed. Install it with `apt-get install -y wrk` (Debian/Ubuntu) or `brew install wrk` (macOS), then run again.')
    process.exit(1)
  }
  try {
    await main(options)
  } catch (error) {
    console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    process.exit(1)
  }
}
