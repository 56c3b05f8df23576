/**
 * The shape of `src/`: layers import only downward, and nothing imports in a loop (docs/development.md,
 * "Layers"). Type-only imports count: they are what a reader follows. The graph is read here rather
 * than by a graph tool, because those read TypeScript through its compiler API, which TypeScript 7
 * no longer has (dependency-cruiser 18 also refuses Node 20); Bun resolves every import. Some
 * seams get a rule of their own: which files of modules/ may import http/, what http/ may take
 * from storage/ (below, `SPEAKS_HTTP` and `HTTP_FROM_STORAGE`), that http/'s helpers need none of
 * its request steps (`http/steps/`), and that each runtime's folder keeps to itself. Outside `src/`,
 * the helpers the tests and the benchmark share (`test/support/`) import neither, and no test
 * imports the benchmark.
 */
import { describe, expect, test } from 'bun:test'
import { Glob } from 'bun'
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const ROOT = join(import.meta.dir, '../..')
const SRC = join(ROOT, 'src')

/**
 * Lowest first. A file may import its own layer's files and lower ones. http/ holds the request's
 * steps (http/steps/, which app.ts lists) and the helpers they and the routes use; the admission step
 * is one of them, so it takes what it needs of sessions from below (domain/session-token.ts), not
 * from modules/session/. The entries are each runtime's folder (runtime/) and the typed client.
 */
const LAYERS: [string, RegExp][] = [
  ['domain', /^(domain\/|errors\.ts$|log\.ts$|stall-trace\.ts$|types\/)/],
  ['storage', /^storage\//],
  ['config', /^config\.ts$/],
  ['http', /^http\//],
  ['modules', /^modules\//],
  ['app', /^app\.ts$/],
  ['entries', /^(runtime\/|client\/)/],
]

/** `import … from '…'`, `export … from '…'`, `import '…'`, `import('…')`: our own files only. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)'(\.{1,2}\/[^']+)'/g

/**
 * A feature's rules know no HTTP: in modules/, only the files that speak HTTP import http/ (types
 * too). They are a feature's routes (`modules/<feature>/index.ts`, which use the admission step) and
 * the docs module (it describes the HTTP contract itself: paths, headers, the envelope, the steps'
 * limits). Services, read-back, models and the rest take what they share with http/ (the business
 * outcomes, a `policy_ref`'s form) from domain/.
 */
const SPEAKS_HTTP = /^modules\/(?:[^/]+\/index\.ts$|docs\/)/

/** The request's steps, each a plugin app.ts uses; the rest of http/ is helpers, which need no step. */
const STEPS = /^http\/steps\//

/** A runtime's own folder (`runtime/bun/`, …): it imports no other runtime's. */
const RUNTIME_FOLDER = /^runtime\/[^/]+\//

/**
 * http/ takes from storage/ only the seam, `storage/storage.ts`, and from it only types (`Storage`,
 * `SessionRow`) and one value: the seam's error `StorageUnavailable`, which `http/error-mapping.ts`
 * must recognise (`instanceof`) to answer `storage_unavailable`. No engine, no sweep, no constant: a
 * rule both need lives in domain/ (how long an ended session is recognised, domain/session-tombstone.ts).
 */
const HTTP_FROM_STORAGE = { seam: 'storage/storage.ts', values: ['StorageUnavailable'] }

/** `import|export [type] … from '…'` with its clause, and `import '…'` / `import('…')`, which take the whole module. */
const STATEMENT = /\b(?:import|export)\s+(type\s+)?([\w$*{},\s]*?)\s*from\s*'(\.{1,2}\/[^']+)'|\bimport\s*\(?\s*'(\.{1,2}\/[^']+)'/g

/** The names a clause takes as values (types left out): `A` → default, `* as A` → *, `{ a, type B, c as d }` → a, c. */
function valueNames(clause: string): string[] {
  const named = /\{([^}]*)\}/.exec(clause)?.[1] ?? ''
  const outer = clause
    .replace(/\{[^}]*\}/, '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
  return [
    ...outer.map((part) => (part.startsWith('*') ? '*' : 'default')),
    ...named
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name && !name.startsWith('type '))
      .map((name) => name.split(/\s+as\s+/)[0]!),
  ]
}

/** Each of `file`'s imports of our own files: its target and the names it takes as values. */
function importsOf(file: string): { target: string; values: string[] }[] {
  const from = join(SRC, file)
  return [...readFileSync(from, 'utf8').matchAll(STATEMENT)].map(([, typeOnly, clause, specifier, whole]) => ({
    target: relative(SRC, Bun.resolveSync((specifier ?? whole)!, dirname(from))),
    values: whole !== undefined ? ['*'] : typeOnly ? [] : valueNames(clause!),
  }))
}

function layerOf(file: string): number {
  const index = LAYERS.findIndex(([, pattern]) => pattern.test(file))
  if (index < 0) throw new Error(`${file} belongs to no layer: add it to LAYERS`)
  return index
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of new Glob('**/*.ts').scanSync(SRC)) {
    const from = join(SRC, file)
    const targets = [...readFileSync(from, 'utf8').matchAll(SPECIFIER)]
      .map(([, specifier]) => relative(SRC, Bun.resolveSync(specifier!, dirname(from))))
      .filter((target) => target.endsWith('.ts') && !target.startsWith('..'))
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

/** Every loop of the graph, each as the path that closes it (one per back edge of a depth-first walk). */
function loops(graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const done = new Set<string>()
  const path: string[] = []
  const visit = (node: string) => {
    path.push(node)
    for (const next of graph.get(node) ?? []) {
      if (path.includes(next)) found.push([...path.slice(path.indexOf(next)), next])
      else if (!done.has(next)) visit(next)
    }
    path.pop()
    done.add(node)
  }
  for (const node of graph.keys()) if (!done.has(node)) visit(node)
  return found
}

/** The graph between feature folders (`modules/plans`, …): a loop there is two features that each need the other. */
function featureGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const feature = (file: string) => /^modules\/[^/]+\//.exec(file)?.[0]
  const folders = new Map<string, string[]>()
  for (const [file, targets] of graph) {
    const from = feature(file)
    if (!from) continue
    const to = targets.map(feature).filter((folder): folder is string => folder !== undefined && folder !== from)
    folders.set(from, [...new Set([...(folders.get(from) ?? []), ...to])])
  }
  return folders
}

describe('src/ imports', () => {
  const graph = importGraph()

  test('reads the graph (a check of nothing would pass)', () => {
    expect(graph.get('app.ts')).toContain('http/steps/admission.ts')
    expect(graph.get('http/steps/admission.ts')).toContain('storage/storage.ts')
    expect(graph.get('runtime/bun/start-sandbox.ts')).toEqual(expect.arrayContaining(['runtime/bun/sqlite.ts', 'runtime/start.ts']))
  })

  test('no file imports a file of a higher layer', () => {
    const upward = [...graph].flatMap(([file, targets]) => targets.filter((target) => layerOf(target) > layerOf(file)).map((target) => `${file} -> ${target}`))
    expect(upward).toEqual([])
  })

  test('no files import each other in a loop', () => {
    expect(loops(graph).map((loop) => loop.join(' -> '))).toEqual([])
  })

  test('no feature folders import each other in a loop', () => {
    expect(loops(featureGraph(graph)).map((loop) => loop.join(' -> '))).toEqual([])
  })

  test('in modules/, only routes and the docs module import http/', () => {
    // Read the graph: a route file imports http/ (a check of nothing would pass).
    expect(graph.get('modules/policies/index.ts')?.some((target) => target.startsWith('http/'))).toBe(true)
    const reaching = [...graph]
      .filter(([file]) => file.startsWith('modules/') && !SPEAKS_HTTP.test(file))
      .flatMap(([file, targets]) => targets.filter((target) => target.startsWith('http/')).map((target) => `${file} -> ${target}`))
    expect(reaching).toEqual([])
  })

  test("http/ takes from storage/ only the seam's types and its StorageUnavailable", () => {
    const taken = [...graph.keys()]
      .filter((file) => file.startsWith('http/'))
      .flatMap((file) =>
        importsOf(file)
          .filter(({ target }) => target.startsWith('storage/'))
          .map((use) => ({ file, ...use })),
      )
    // Read the imports: error-mapping.ts takes the error as a value, health.ts takes a type only.
    expect(taken).toContainEqual({ file: 'http/error-mapping.ts', target: HTTP_FROM_STORAGE.seam, values: ['StorageUnavailable'] })
    expect(taken).toContainEqual({ file: 'http/health.ts', target: HTTP_FROM_STORAGE.seam, values: [] })
    const beyond = taken.filter(({ target, values }) => target !== HTTP_FROM_STORAGE.seam || values.some((name) => !HTTP_FROM_STORAGE.values.includes(name)))
    expect(beyond.map(({ file, target, values }) => `${file} -> ${target} (${values.join(', ') || 'types'})`)).toEqual([])
  })

  test("http/'s helpers import none of its steps, and app.ts uses every step", () => {
    const steps = [...graph.keys()].filter((file) => STEPS.test(file))
    // Read the folder: the seven steps are there (a check of nothing would pass).
    expect(steps.length).toBeGreaterThanOrEqual(7)
    const helpers = [...graph.keys()].filter((file) => file.startsWith('http/') && !STEPS.test(file))
    expect(
      helpers.flatMap((file) =>
        graph
          .get(file)!
          .filter((target) => STEPS.test(target))
          .map((target) => `${file} -> ${target}`),
      ),
    ).toEqual([])
    expect(steps.filter((step) => !graph.get('app.ts')!.includes(step))).toEqual([])
  })

  test("the entries keep apart: a runtime's folder imports no other runtime's, the client and the runtimes none of each other", () => {
    const folder = (file: string) => RUNTIME_FOLDER.exec(file)?.[0]
    const apart = (file: string, target: string) =>
      file.startsWith('client/')
        ? target.startsWith('runtime/')
        : file.startsWith('runtime/') && (target.startsWith('client/') || (folder(target) !== undefined && folder(target) !== folder(file)))
    const crossing = [...graph].flatMap(([file, targets]) => targets.filter((target) => apart(file, target)).map((target) => `${file} -> ${target}`))
    expect(crossing).toEqual([])
  })

  test('the import reader tells values from types', () => {
    expect(valueNames('{ a, type B, c as d }')).toEqual(['a', 'c'])
    expect(valueNames('A, { b }')).toEqual(['default', 'b'])
    expect(valueNames('* as A')).toEqual(['*'])
  })
})

/**
 * Each relative import of our own files by each `.ts` file below `folder` (of the repository), as
 * repository paths; a path, so a file made at test time need not exist. A package reached by a
 * relative path (the tools workspace's, test/tools/node_modules) is not our file, and is left out.
 */
function repositoryImports(folder: string): { file: string; target: string }[] {
  const ours = (path: string) => !path.split('/').includes('node_modules')
  return [...new Glob('**/*.ts').scanSync(join(ROOT, folder))].filter(ours).flatMap((file) => {
    const from = join(ROOT, folder, file)
    return [...readFileSync(from, 'utf8').matchAll(SPECIFIER)]
      .map(([, specifier]) => ({ file: relative(ROOT, from), target: relative(ROOT, resolve(dirname(from), specifier!)) }))
      .filter(({ target }) => ours(target))
  })
}

describe('test/ and bench/ imports', () => {
  const within = (path: string, folders: string[]) => folders.some((folder) => path.startsWith(`${folder}/`))
  const described = (uses: { file: string; target: string }[]) => uses.map(({ file, target }) => `${file} -> ${target}`)

  test('test/support/, which the tests and the benchmark share, imports neither of them', () => {
    const uses = repositoryImports('test/support')
    // Read the imports: wait.ts takes its port and pause from launch.ts (a check of nothing would pass).
    expect(uses).toContainEqual({ file: 'test/support/wait.ts', target: 'test/support/launch' })
    expect(described(uses.filter(({ target }) => within(target, ['bench', 'test/http', 'test/unit'])))).toEqual([])
  })

  test('the tests import nothing from bench/, and bench/ nothing of test/ but test/support/', () => {
    const tests = repositoryImports('test')
    const bench = repositoryImports('bench')
    expect(bench).toContainEqual({ file: 'bench/run.ts', target: 'test/support/launch' })
    expect(described(tests.filter(({ target }) => within(target, ['bench'])))).toEqual([])
    expect(described(bench.filter(({ target }) => within(target, ['test']) && !within(target, ['test/support'])))).toEqual([])
  })
})
