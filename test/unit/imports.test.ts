/**
 * The shape of `src/`: layers import only downward, and nothing imports in a loop (docs/development.md,
 * "Layers"). Type-only imports count: they are what a reader follows. The graph is read here rather
 * than by a graph tool, because those read TypeScript through its compiler API, which TypeScript 7
 * no longer has (dependency-cruiser 18 also refuses Node 20); Bun resolves every import.
 */
import { describe, expect, test } from 'bun:test'
import { Glob } from 'bun'
import { readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

const SRC = join(import.meta.dir, '../../src')

/** Lowest first. A file may import its own layer's files and lower ones. */
const LAYERS: [string, RegExp][] = [
  ['domain', /^(domain\/|errors\.ts$|log\.ts$|types\/)/],
  ['storage', /^storage\//],
  ['config', /^config\.ts$/],
  ['http', /^http\//],
  ['modules', /^modules\//],
  ['app', /^app\.ts$/],
  ['entries', /^(server(\.\w+)?\.ts$|client\/)/],
]

/** `import … from '…'`, `export … from '…'`, `import '…'`, `import('…')`: our own files only. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)'(\.{1,2}\/[^']+)'/g

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
    expect(graph.get('app.ts')).toContain('modules/session/admission.ts')
    expect(graph.get('modules/session/admission.ts')).toContain('storage/storage.ts')
  })

  test('no file imports a file of a higher layer', () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => layerOf(target) > layerOf(file)).map((target) => `${file} -> ${target}`))
    expect(upward).toEqual([])
  })

  test('no files import each other in a loop', () => {
    expect(loops(graph).map((loop) => loop.join(' -> '))).toEqual([])
  })

  test('no feature folders import each other in a loop', () => {
    expect(loops(featureGraph(graph)).map((loop) => loop.join(' -> '))).toEqual([])
  })
})
