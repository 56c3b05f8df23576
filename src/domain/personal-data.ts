/**
 * @module The personal-data rule: which field names and values the sandbox refuses, at any depth.
 * Names are folded (case, `_`, `-` and spaces removed) so `firstName`, `first_name` and
 * `FIRST-NAME` are one name.
 */
import { ApiError, childPath, isRepeatableName, type ErrorDetail } from '../errors'

const EXACT = new Set([
  'name',
  'firstname',
  'lastname',
  'fullname',
  'givenname',
  'middlename',
  'familyname',
  'surname',
  'dob',
  'street',
  'postcode',
  'zip',
  'nationalid',
  'pan',
  'ssn',
  'gender',
])
/** Names containing any of these; one pattern is half the cost of a test per word (every body key passes here). */
const CONTAINED = new RegExp(['email', 'phone', 'mobile', 'telephone', 'passport', 'birth', 'address', 'nominee', 'aadhaar'].join('|'))
const PLAIN_NAME = /^[A-Za-z_ -]{1,64}$/

/** Deeper or longer JSON than any sandbox request needs; refused so that walking a body stays cheap. */
export const MAX_DEPTH = 16
export const MAX_ARRAY_ITEMS = 64

export function foldName(name: string): string {
  return name.toLowerCase().replace(/[\s_-]/g, '')
}

export function isPersonalDataName(name: string): boolean {
  const folded = foldName(name)
  return EXACT.has(folded) || CONTAINED.test(folded)
}

/**
 * Whether `value` holds `local@domain.tld` (`/[^\s@]+@[^\s@]+\.[^\s@]{2,}/`) anywhere. Not that
 * regex: unanchored, it rescans the rest of the value from every start, so 16 KiB without a space
 * or `@` cost ≈ 70 ms. One pass instead: between spaces and `@`s, a part that follows a non-empty
 * part and has a dot after its first character with two characters after that.
 */
export function looksLikeEmail(value: string): boolean {
  if (!value.includes('@')) return false
  for (const word of value.split(/\s+/)) {
    const parts = word.split('@')
    for (let index = 1; index < parts.length; index++) {
      const domain = parts[index]!
      const dot = domain.indexOf('.', 1)
      if (parts[index - 1] !== '' && dot > 0 && dot <= domain.length - 3) return true
    }
  }
  return false
}

interface Node {
  value: unknown
  depth: number
  path: () => string
  /** Under a key the answer may not repeat: reported by the path of the object that holds that key. */
  unnamed?: boolean
}

function child(parent: Node, key: string | number, value: unknown): Node {
  const depth = parent.depth + 1
  if (parent.unnamed || (typeof key === 'string' && !isRepeatableName(key))) return { value, depth, path: parent.path, unnamed: true }
  return { value, depth, path: () => childPath(parent.path(), key) }
}

const named = (node: Node) => node.path() || '$'

/**
 * Walks the whole body once, without recursion (the 16 KiB cap bounds the work): the JSON paths of
 * every personal-data field or e-mail-shaped value, and the first place the body is nested too deep
 * or a list too long. An e-mail-shaped key is reported by its parent's path, so that the answer
 * never repeats it. Paths are built only for what is reported.
 */
export function inspectBody(body: unknown): { personal: string[]; overLimit: ErrorDetail | null } {
  const personal: string[] = []
  let overLimit: ErrorDetail | null = null
  const pending: Node[] = [{ value: body, depth: 0, path: () => '' }]
  for (let node = pending.pop(); node; node = pending.pop()) {
    const { value } = node
    if (node.depth > MAX_DEPTH) overLimit ??= { field: named(node), issue: `nested deeper than ${MAX_DEPTH} levels` }
    if (typeof value === 'string') {
      if (looksLikeEmail(value)) personal.push(named(node))
    } else if (Array.isArray(value)) {
      // The traveller list has its own limit and error (too_many_travellers, after validation).
      const isTravellers = node.depth === 1 && node.path() === 'travellers'
      if (value.length > MAX_ARRAY_ITEMS && !isTravellers) overLimit ??= { field: named(node), issue: `at most ${MAX_ARRAY_ITEMS} items` }
      for (let index = value.length - 1; index >= 0; index--) pending.push(child(node, index, value[index]))
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value)
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, item] = entries[index]!
        // A key that is not a plain name may carry the value itself ("phone +91…"): report its parent.
        // A personal-data name in words ("Date Of Birth") is ours to repeat, having recognised it.
        if (looksLikeEmail(key)) personal.push(named(node))
        else if (isPersonalDataName(key)) personal.push(PLAIN_NAME.test(key) && !node.unnamed ? childPath(node.path(), key) : named(node))
        else pending.push(child(node, key, item))
      }
    }
  }
  return { personal: [...new Set(personal)], overLimit }
}

/** JSON paths of every personal-data field or e-mail-shaped value in `body`. */
export function findPersonalData(body: unknown): string[] {
  return inspectBody(body).personal
}

/**
 * Refuses a body with personal data (`pii_not_allowed`, naming the paths and never the values), and
 * then one nested deeper or with longer lists than any sandbox request needs (`validation_failed`).
 */
export function rejectPersonalData(body: unknown): void {
  const { personal, overLimit } = inspectBody(body)
  if (personal.length > 0) {
    throw new ApiError('pii_not_allowed', { details: personal.map((field) => ({ field, issue: 'personal data is not accepted' })) })
  }
  if (overLimit) throw new ApiError('validation_failed', { variant: 'tooDeep', details: [overLimit] })
}
