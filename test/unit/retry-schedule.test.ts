/**
 * One webhook retry schedule everywhere, in one set of words derived here from delivery.ts's own
 * delays (`6 attempts over 12.6 minutes (1, 5, 30, 120 and 600 s apart)`): every Markdown file we
 * own and every description in the OpenAPI document state it so, or not at all, and count no other
 * number of attempts. docs/spec holds copies of the public specification and contract, not ours to
 * word (they say only "retried with back-off").
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { RETRY_DELAYS_S, RETRY_SCHEDULE } from '../../src/modules/events/delivery'
import { inProcessApp } from './support/app'
import { resolved, servedDocument, type Json } from './support/openapi'

const ROOT = resolve(import.meta.dir, '../..')
const SKIPPED = new Set(['node_modules', 'dist', '.tmp', '.git', 'test-results', 'playwright-report', 'data', join('docs', 'spec')])

const ATTEMPTS = RETRY_DELAYS_S.length + 1
const SECONDS = RETRY_DELAYS_S.reduce((sum, delay) => sum + delay, 0)
const SCHEDULE =
  `${ATTEMPTS} attempts over ${+(SECONDS / 60).toFixed(1)} minutes ` + `(${RETRY_DELAYS_S.slice(0, -1).join(', ')} and ${RETRY_DELAYS_S.at(-1)} s apart)`

/**
 * Ways of stating a schedule, in any words; the captured part must be inside the sentence above.
 * A count with a duration, a list of delays in seconds, or a duration after a word of retrying.
 */
const STATEMENTS = [
  /(\b\d+ attempts over [^.;]*?\b\d+(?:\.\d+)? (?:minutes|seconds|s)\b)/g,
  /(\b\d+(?:, \d+)+,? and \d+ s\b)/g,
  /\b(?:attempt|retried|retries|retry\b(?!-))[^.;]{0,80}?\b((?:about )?\d+(?:\.\d+)? minutes)\b/gi,
]

/** The schedules `text` states otherwise than SCHEDULE, and the counts of attempts other than ATTEMPTS. */
function misstatements(raw: string): string[] {
  // Markdown wraps its lines: a sentence is one line of text here.
  const text = raw.replace(/\s+/g, ' ')
  const sanctioned: [number, number][] = [...text.matchAll(new RegExp(SCHEDULE.replace(/[.()]/g, '\\$&'), 'g'))].map((match) => [
    match.index!,
    match.index! + SCHEDULE.length,
  ])
  const found: string[] = []
  for (const pattern of STATEMENTS) {
    for (const match of text.matchAll(pattern)) {
      const start = match.index! + match[0].indexOf(match[1]!)
      if (!sanctioned.some(([from, to]) => start >= from && start + match[1]!.length <= to)) found.push(match[0])
    }
  }
  for (const match of text.matchAll(/\b(\d+) (?:delivery )?attempts\b/g)) if (Number(match[1]) !== ATTEMPTS) found.push(match[0])
  return found
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (SKIPPED.has(name) || SKIPPED.has(relative(ROOT, path))) return []
    if (statSync(path).isDirectory()) return markdownFiles(path)
    return name.endsWith('.md') ? [path] : []
  })
}

/** Every string of the document but its examples (values, not prose), with where it is. */
function* prose(node: Json, at = '#'): Generator<[string, string]> {
  if (typeof node === 'string') yield [at, node]
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) if (key !== 'example' && key !== 'examples') yield* prose(value, `${at}/${key}`)
  }
}

describe('the webhook retry schedule', () => {
  test('is derived from delivery.ts, and the server words it the same', () => {
    expect(SCHEDULE).toMatch(/^\d+ attempts over [\d.]+ minutes \([\d, ]+ and \d+ s apart\)$/)
    expect(RETRY_SCHEDULE).toBe(SCHEDULE)
  })

  test('the checker finds other wordings', () => {
    for (const wording of [
      'Failed deliveries are retried (6 attempts over about 12.5 minutes).',
      'It is attempted again 1, 5, 30, 120 and 600 s later.',
      'Deliveries are retried for about 12 minutes.',
      `A delivery makes at most ${ATTEMPTS + 1} attempts.`,
      `${SCHEDULE.replace(' apart', ' later')}.`,
    ])
      expect(misstatements(wording), wording).not.toEqual([])
    expect(misstatements(`Retried: ${SCHEDULE}; the list shows every attempt, at most ${ATTEMPTS} attempts.`)).toEqual([])
  })

  test('every Markdown file we own states it in those words, or not at all', () => {
    const files = markdownFiles(ROOT)
    expect(files.map((file) => relative(ROOT, file))).toEqual(expect.arrayContaining(['README.md', join('docs', 'api.md')]))
    expect(files.map((file) => relative(ROOT, file))).not.toContain(join('docs', 'spec', 'contract.md'))
    const wrong = files.flatMap((file) => misstatements(readFileSync(file, 'utf8')).map((statement) => `${relative(ROOT, file)}: ${statement}`))
    expect(wrong).toEqual([])
    // Where partners read about deliveries, it is stated.
    for (const file of ['README.md', join('docs', 'api.md')]) expect(readFileSync(join(ROOT, file), 'utf8').replace(/\s+/g, ' ')).toContain(SCHEDULE)
  })

  test('the OpenAPI document states it in those words in every webhook, and nowhere otherwise', async () => {
    const document = (await servedDocument(await inProcessApp())) as { webhooks: Record<string, Json> } & Json
    const webhooks = Object.entries(document.webhooks)
    expect(webhooks.length).toBeGreaterThan(0)
    for (const [name, item] of webhooks) expect(resolved(document, resolved(document, item).post).description, name).toContain(SCHEDULE)
    expect([...prose(document)].flatMap(([at, text]) => misstatements(text).map((statement) => `${at}: ${statement}`))).toEqual([])
  })
})
