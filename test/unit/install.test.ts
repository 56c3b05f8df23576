/**
 * `npm install` on a fresh machine prints nothing a newcomer must act on about this project's own
 * configuration: every install script is decided in `allowScripts`, and no installed package
 * refuses the Node the project supports (npm's EBADENGINE warning).
 */
import { describe, expect, test } from 'bun:test'
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
