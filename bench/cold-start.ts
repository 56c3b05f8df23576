/**
 * Cold start of each deploy target: time from spawning the process to its first answered request
 * (`GET /healthz`, polled every millisecond), and the artefact's size. Run `npm run build` first.
 *
 *   bun bench/cold-start.ts [runs]     (default 10 runs per target; prints a Markdown table and
 *                                       writes it to bench/results-cold-start.md, replacing it)
 *
 * `coldStart` is exported for bench/scale.ts (part of `bun bench/run.ts`).
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { RUNTIMES, runtimeCommand } from '../test/http/support/targets'
import { sleep } from '../test/support/wait'

const ROOT = resolve(import.meta.dir, '..')
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name)

/** The deploy targets, started as the HTTP suite starts them (`bun` and `deno` from node_modules/.bin). */
const TARGETS = ([
  ['binary', 'binary (bun build --compile)'], ['bun', 'bun run (source)'], ['deno', 'deno (single file)'], ['node', 'node (bundle)'],
] as const).map(([runtime, name]) => {
  const { command, args } = runtimeCommand(runtime, ROOT)
  return { name, artefact: RUNTIMES[runtime].artefact, command: [['bun', 'deno'].includes(command) ? bin(command) : command, ...args] }
})

export async function coldStart(command: string[], port: number, dir: string): Promise<number> {
  const started = performance.now()
  const child = spawn(command[0]!, command.slice(1), {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', SANDBOX_DB_PATH: join(dir, `cold-${port}.db`) },
    stdio: 'ignore',
  })
  try {
    for (;;) {
      if (performance.now() - started > 15_000) throw new Error(`${command.join(' ')} did not answer in 15 s`)
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return performance.now() - started
      } catch {
        await sleep(1)
      }
    }
  } finally {
    child.kill('SIGTERM')
    await new Promise((done) => child.once('exit', done))
  }
}

if (import.meta.main) {
  const runs = Number(process.argv[2] ?? 10)
  const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-cold-'))
  const rows: string[] = []
  let port = 3900
  for (const target of TARGETS) {
    if (target.artefact && !existsSync(join(ROOT, target.artefact))) {
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
  writeFileSync(join(ROOT, 'bench', 'results-cold-start.md'), '# Cold start results\n\n' +
    `Written by \`${command}\` (\`npm run bench:cold-start\` runs it) at ${new Date().toISOString().slice(0, 16)}Z, replacing the ` +
    'previous results; how to read them: [README](README.md).\n\n' + `${table}\n`)
  console.error('bench: wrote bench/results-cold-start.md')
}
