/**
 * The table of error codes (src/errors.ts) is the one place their words live: every code has its
 * status and message there, no throw site writes words of its own, no other file copies a message,
 * and the OpenAPI document's error examples say what the table says.
 */
import { describe, expect, test } from 'bun:test'
import { Glob } from 'bun'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ApiError, ERRORS, FORCED, errorMessage, type ErrorCode } from '../../src/errors'
import { FailureModel } from '../../src/http/envelope-model'
import { ERROR_EXAMPLES } from '../../src/modules/docs/examples'
import { inProcessApp } from './support/app'
import { servedDocument, type Json } from './support/openapi'

const SRC = join(import.meta.dir, '../../src')
const sources = [...new Glob('**/*.ts').scanSync(SRC)].map((file) => ({ file, text: readFileSync(join(SRC, file), 'utf8') }))

type Entry = { status: number; message?: unknown; messages?: Record<string, unknown> }
const entries = Object.entries(ERRORS) as [ErrorCode, Entry][]
/** Each code's messages, a plain one under ''. */
const messagesOf = (entry: Entry): Record<string, unknown> => entry.messages ?? { '': entry.message }

describe('the table of error codes', () => {
  test('every code of the contract has an entry: an HTTP error status and at least one message', () => {
    const contract = (FailureModel.properties.error.properties.code as unknown as { anyOf: { const: string }[] }).anyOf.map((literal) => literal.const)
    expect(Object.keys(ERRORS)).toEqual(contract)
    for (const [code, entry] of entries) {
      expect(entry.status, code).toBeGreaterThanOrEqual(400)
      expect(entry.status, code).toBeLessThan(600)
      const messages = Object.values(messagesOf(entry))
      expect(messages.length, code).toBeGreaterThan(0)
      for (const message of messages) expect(['string', 'function'], code).toContain(typeof message)
    }
  })

  test("an ApiError answers its code's status and the table's words, with the forced suffix when forced", () => {
    expect(new ApiError('policy_not_found')).toMatchObject({ status: 404, code: 'policy_not_found', message: ERRORS.policy_not_found.message })
    const late = new ApiError('document_not_ready', { values: { readyAt: '2026-11-25T09:02:05.000Z' }, retryAfter: 7 })
    expect(late).toMatchObject({ status: 409, retryAfter: 7, message: 'The certificate is not ready yet; it will be at 2026-11-25T09:02:05.000Z.' })
    const forced = new ApiError('session_expired', { variant: 'ended', forced: true })
    expect(forced.message).toBe(`${ERRORS.session_expired.messages.ended}${FORCED}`)
  })

  test('no ApiError in src/ is given words of its own: every site names its code, and a variant or values', () => {
    // The types refuse it (test/types/errors.typecheck.ts); this catches a cast around them.
    const ownWords = /(?:new ApiError|super)\(\s*[^,()]+,\s*[`'"]|new ApiError\([^)]*\bmessage\s*:/g
    const offenders = sources.flatMap(({ file, text }) => [...text.matchAll(ownWords)].map((match) => `${file}: ${match[0]}`))
    expect(offenders).toEqual([])
    expect(sources.some(({ text }) => text.includes("new ApiError('"))).toBe(true)
  })

  test('no other file of src/ copies a message of the table', () => {
    const texts = entries.flatMap(([, entry]) => Object.values(messagesOf(entry))).filter((message): message is string => typeof message === 'string')
    const copies = sources
      .filter(({ file }) => file !== 'errors.ts')
      .flatMap(({ file, text }) => texts.filter((message) => text.includes(message)).map((message) => `${file}: ${message}`))
    expect(copies).toEqual([])
  })
})

describe("the OpenAPI document's error examples", () => {
  /** Every failure envelope among the document's examples. */
  function failureExamples(node: Json, found: { code: ErrorCode; message: string }[] = []) {
    if (Array.isArray(node)) for (const item of node) failureExamples(item, found)
    else if (node && typeof node === 'object') {
      const error = node.error as { code?: ErrorCode; message?: string } | undefined
      if (node.ok === false && error?.code && typeof error.message === 'string') found.push({ code: error.code, message: error.message })
      for (const value of Object.values(node)) failureExamples(value, found)
    }
    return found
  }

  test("say the table's words: a plain message as it is, and a message with values filled in with the example's", async () => {
    const examples = failureExamples(await servedDocument(await inProcessApp()))
    expect(examples.length).toBeGreaterThan(5)
    for (const { code, message } of examples) {
      const { details: _details, ...wording } = ERROR_EXAMPLES[code]
      expect(message, code).toBe(errorMessage(code, wording))
      const texts = Object.values(messagesOf(ERRORS[code] as Entry))
      if (texts.every((text) => typeof text === 'string')) expect(texts, code).toContain(message)
    }
  })
})
