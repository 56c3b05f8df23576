/**
 * `npm install` on a fresh machine prints nothing a newcomer must act on about this project's own
 * configuration: every install script is decided in `allowScripts`, and no installed package
 * refuses the Node the project supports (npm's EBADENGINE warning). A production install
 * (`npm install --omit=dev`) has everything `npm start` runs.
 */
import { describe, expect, test } from 'bun:test'
import { Glob } from 'bun'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import semver from 'semver'

const ROOT = resolve(import.meta.dir, '../..')

type Manifest = { name: string; version: string; engines?: { node?: string } }

/** Every installed package's manifest below `modules`, nested ones included. */
function manifests(modules: string): Manifest[] {
  if (!existsSync(modules)) return []
  return readdirSync(modules).flatMap((entry) => {
    if (entry.startsWith('.')) return []
    const dir = join(modules, entry)
    return entry.startsWith('@') ? readdirSync(dir).flatMap((name) => packageAt(join(dir, name))) : packageAt(dir)
  })
}

function packageAt(dir: string): Manifest[] {
  const file = join(dir, 'package.json')
  if (!existsSync(file)) return []
  return [JSON.parse(readFileSync(file, 'utf8')), ...manifests(join(dir, 'node_modules'))]
}

describe('npm install', () => {
  test('every dependency with an install script is allowed or denied in allowScripts', () => {
    const listed = spawnSync('npm', ['install-scripts', 'ls'], { cwd: ROOT, encoding: 'utf8' })
    expect(listed.status).toBe(0)
    expect(listed.stdout.trim()).toBe('No packages with unreviewed install scripts.')
  })

  test("no installed package refuses this machine's Node (the README names Node 20)", () => {
    const node = spawnSync('node', ['--version'], { encoding: 'utf8' }).stdout.trim()
    expect(node).toMatch(/^v\d+\./)
    const refusing = [...manifests(join(ROOT, 'node_modules')), ...manifests(join(ROOT, 'test', 'tools', 'node_modules'))]
      .filter((manifest) => manifest.engines?.node && !semver.satisfies(node, manifest.engines.node))
      .map((manifest) => `${manifest.name}@${manifest.version} wants node ${manifest.engines!.node}`)
    expect(refusing).toEqual([])
  })
})

type ProjectManifest = { scripts: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string> }

/** What an import of `src/` loads at run time: not type-only imports, which the runtime strips. */
const IMPORTS = [/\b(?:import|export)\s+(?!type\s)[\w\s{},*$]*?\bfrom\s*'([^']+)'/g, /\bimport\s*\(\s*'([^']+)'\s*\)/g, /^import\s*'([^']+)'/gm]

/** The package an import names (`@elysiajs/openapi/openapi` is `@elysiajs/openapi`); null for our own files and the runtimes' modules. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || /^(node|bun):/.test(specifier) || specifier === 'bun') return null
  return specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')
}

/** Every package `src/` imports at run time. */
function importedPackages(): string[] {
  const names = new Set<string>()
  for (const file of new Glob('**/*.ts').scanSync(join(ROOT, 'src'))) {
    const text = readFileSync(join(ROOT, 'src', file), 'utf8')
    for (const pattern of IMPORTS) for (const [, specifier] of text.matchAll(pattern)) names.add(packageOf(specifier!) ?? '')
  }
  names.delete('')
  return [...names].sort()
}

describe('npm install --omit=dev', () => {
  const manifest: ProjectManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

  test('every package src/ imports is a dependency, not only a devDependency (a production install leaves those out)', () => {
    const imported = importedPackages()
    expect(imported).toContain('elysia')
    expect(imported).toContain('pdf-lib') // loaded on the first certificate only: a dynamic import counts
    expect(imported.filter((name) => !Object.hasOwn(manifest.dependencies, name))).toEqual([])
  })

  test('the program npm start and npm run start:local run comes from a dependency', () => {
    for (const script of ['start', 'start:local']) {
      const program = manifest.scripts[script]!.split(' ')[0]!
      const providers = Object.keys(manifest.dependencies).filter((name) => {
        const bin: string | Record<string, string> | undefined = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).bin
        return typeof bin === 'string' ? name === program : Object.hasOwn(bin ?? {}, program)
      })
      expect(providers, `${script}: ${manifest.scripts[script]}`).toEqual([program])
      expect(manifest.devDependencies[program], `${program} is not also a devDependency`).toBeUndefined()
    }
  })
})
