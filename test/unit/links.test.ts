/**
 * Every relative link in the project's Markdown leads somewhere: the file exists inside the
 * repository, and a `#heading` exists in the file it names (GitHub's anchors). A partner reads the
 * README and docs/ in any clone, where a link out of the repository is broken.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '../..')
const SKIPPED = new Set(['node_modules', 'dist', '.tmp', '.git', 'test-results', 'playwright-report', 'data'])

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIPPED.has(name)) return []
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return markdownFiles(path)
    return name.endsWith('.md') ? [path] : []
  })
}

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '')
}

/** GitHub's anchor for a heading: lower case, punctuation dropped (but `-` and `_`), spaces to `-`. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')
}

function anchors(file: string): Set<string> {
  const seen = new Map<string, number>()
  const found = new Set<string>()
  for (const [, heading] of readFileSync(file, 'utf8')
    .replace(/^```[\s\S]*?^```/gm, '')
    .matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    found.add(count === 0 ? base : `${base}-${count}`)
  }
  return found
}

/** The problem with one link from `file`, or null when it leads somewhere. */
function problem(file: string, target: string): string | null {
  if (/^(?:[a-z]+:|\/\/)/i.test(target)) return null // a URL: not ours to check here
  const [path = '', anchor] = target.split('#')
  const destination = path === '' ? file : resolve(dirname(file), decodeURI(path))
  if (relative(ROOT, destination).startsWith('..')) return 'leaves the repository'
  if (!existsSync(destination)) return 'names a file that does not exist'
  if (anchor && destination.endsWith('.md') && !anchors(destination).has(anchor)) return `names a heading that does not exist (#${anchor})`
  return null
}

describe('Markdown links', () => {
  const files = markdownFiles(ROOT)

  test('the README and the docs are among the files checked', () => {
    const names = files.map((file) => relative(ROOT, file))
    expect(names).toContain('README.md')
    expect(names).toContain(join('docs', 'api.md'))
  })

  test('every relative link names a file (and heading) inside the repository', () => {
    const broken: string[] = []
    for (const file of files) {
      for (const [, target] of prose(readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const why = problem(file, target!)
        if (why) broken.push(`${relative(ROOT, file)}: ${target} ${why}`)
      }
    }
    expect(broken).toEqual([])
  })

  test('anchors follow GitHub: case, punctuation and code marks dropped', () => {
    expect(slug('UAT gateway (mode `uat_gateway`)')).toBe('uat-gateway-mode-uat_gateway')
    expect(slug('Hosted: several instances on PostgreSQL')).toBe('hosted-several-instances-on-postgresql')
    expect(slug('Browser tools on another origin (CORS)')).toBe('browser-tools-on-another-origin-cors')
  })
})
