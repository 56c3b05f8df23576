/**
 * Cold start of each deploy target: time from spawning the process to its first answered request
 * (`GET /healthz`, polled every millisecond), and the artefact's size. Run `npm run build` first.
 *
 *   bun bench/cold-start.ts [runs]     (default 10 runs per target; prints a Markdown table and
 *                                       writes it to bench/results-cold-start.md, replacing it)
 *
 * `coldStart` is exported for bench/scale.ts (part of `bun bench/run.ts`).
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT, RUNTIMES, isBuilt, launch, runtimeCommand } from '../test/support/launch'

/** The deploy targets, started as the HTTP suite starts them (test/support/launch.ts). */
const TARGETS = (
  [
    ['binary', 'binary (bun build --compile)'],
    ['bun', 'bun run (source)'],
    ['deno', 'deno (single file)'],
    ['node', 'node (bundle)'],
  ] as const
).map(([runtime, name]) => ({ name, runtime, artefact: RUNTIMES[runtime].artefact, command: runtimeCommand(runtime) }))

/** Milliseconds from spawning `command` to its first answered `GET /healthz` (asked every millisecond). */
export async function coldStart(command: string[], port: number, dir: string): Promise<number> {
  const started = performance.now()
  const server = await launch({ command, port, env: { SANDBOX_DB_PATH: join(dir, `cold-${port}.db`) }, pollMs: 1, logFile: '/dev/null' })
  const ms = performance.now() - started
  await server.stop('SIGTERM')
  return ms
}

if (import.meta.main) {
  const runs = Number(process.argv[2] ?? 10)
  const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-cold-'))
  const rows: string[] = []
  let port = 3900
  for (const target of TARGETS) {
    if (!isBuilt(target.runtime)) {
      rows.push(`| ${target.name} | not built (npm run build) | | | |`)
      continue
    }
    const times: number[] = []
    for (let run = 0; run < runs; run++) times.push(await coldStart(target.command, port++, dir))
    times.sort((a, b) => a - b)
    const size = target.artefact ? `${(statSync(join(ROOT, target.artefact)).size / 1_048_576).toFixed(1)} MiB` : 'n/a'
    rows.push(`| ${target.name} | ${size} | ${percentile(times, 50).toFixed(0)} ms | ${percentile(times, 90).toFixed(0)} ms | ${times[0]!.toFixed(0)} ms |`)
  }
  rmSync(dir, { recursive: true, force: true })
  const table = [
    `Cold start to first answered request, ${runs} runs each (${process.platform}/${process.arch}, ${navigator.hardwareConcurrency} cores)`,
    '',
    '| target | size | p50 | p90 | best |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n')
  console.log(table)
  const command = `bun bench/cold-start.ts ${process.argv.slice(2).join(' ')}`.trim()
  writeFileSync(
    join(ROOT, 'bench', 'results-cold-start.md'),
    '# Cold start results\n\n' +
      `Written by \`${command}\` (\`npm run bench:cold-start\` runs it) at ${new Date().toISOString().slice(0, 16)}Z, replacing the ` +
      'previous results; how to read them: [README](README.md).\n\n' +
      `${table}\n`,
  )
  console.error('bench: wrote bench/results-cold-start.md')
}
