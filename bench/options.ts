/** @module The benchmark's command line: parsed on demand (importing this does nothing). */
import { parseArgs } from 'node:util'

/** Parts `--only` can pick; `ladder` includes the raw row every ratio is taken against. */
export const PARTS = ['ladder', 'c', 'd', 'e', 'f', 'g', 'pg', 'scale'] as const
export type Part = (typeof PARTS)[number]

export interface Options {
  duration: number
  warmup: number
  connections: number
  sessions: number
  quick: boolean
  only: Set<string> | null
  /** Another checkout whose src/runtime/bun/server.ts runs the sandbox rows (to compare a branch). */
  src: string | null
}

export const USAGE =
  'usage: bun bench/run.ts [--duration S] [--warmup S] [--connections N] [--sessions N] [--quick] ' + `[--only ${PARTS.join(',')}] [--src DIR]`

/** The options, or a one-line reason they are wrong. */
export function parseOptions(argv: string[]): Options | string {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '16' },
      sessions: { type: 'string', default: '100000' },
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      src: { type: 'string' },
    },
  })
  const options: Options = {
    duration: Number(values.duration),
    warmup: Number(values.warmup),
    connections: Number(values.connections),
    sessions: Number(values.sessions),
    quick: values.quick ?? false,
    only: values.only ? new Set(values.only.split(',').map((part) => part.trim())) : null,
    src: values.src ?? null,
  }
  if (!(options.duration > 0) || !(options.warmup >= 0) || !(options.connections >= 1) || !(options.sessions >= 1)) return USAGE
  const unknown = [...(options.only ?? [])].filter((part) => !PARTS.includes(part as Part))
  if (unknown.length > 0) return `unknown part ${unknown.join(', ')}; ${USAGE}`
  return options
}

/** Whether a part runs: all do without `--only`; `scale` not with `--quick`. */
export const wanted = (options: Options, part: Part) => (!options.only || options.only.has(part)) && !(part === 'scale' && options.quick)
