/**
 * The configuration tables of the README and docs/operations.md, made from `SETTINGS` (src/config.ts).
 * `npm run docs:config` rewrites them; `test/unit/config.test.ts` fails while they differ.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { settingsTable } from '../../src/config'

const ROOT = join(import.meta.dir, '../..')
const START = '<!-- made from src/config.ts by npm run docs:config -->'
const END = '<!-- end of the configuration table -->'

/** Each document holding a table, and the variables it lists (all of them when undefined). */
export const CONFIG_TABLES: Record<string, string[] | undefined> = {
  'README.md': ['SANDBOX_PROFILE', 'SANDBOX_RATE_LIMIT', 'SANDBOX_RATE_WINDOW_SECONDS', 'SANDBOX_SESSION_TTL_SECONDS', 'SANDBOX_DB_PATH', 'PORT', 'HOST'],
  'docs/operations.md': undefined,
}

/** The document's text with its table as the settings make it. */
export function withConfigTable(file: string): { current: string; made: string } {
  const current = readFileSync(join(ROOT, file), 'utf8')
  const start = current.indexOf(START)
  const end = current.indexOf(END)
  if (start < 0 || end < start) throw new Error(`${file} has no configuration table between ${START} and ${END}`)
  return { current, made: `${current.slice(0, start + START.length)}\n${settingsTable(CONFIG_TABLES[file])}\n${current.slice(end)}` }
}

if (import.meta.main) {
  for (const file of Object.keys(CONFIG_TABLES)) writeFileSync(join(ROOT, file), withConfigTable(file).made)
}
