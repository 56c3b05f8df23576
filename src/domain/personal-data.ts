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
  /** What holds it, under `key`; null for the body itself. */
  parent: Node | null
  key: string | number
  /** Under a key the answer may not repeat: reported by the path of the object that holds that key. */
  unnamed: boolean
}

function child(parent: Node, key: string | number, value: unknown): Node {
  const unnamed = parent.unnamed || (typeof key === 'string' && !isRepeatableName(key))
  return { value, depth: parent.depth + 1, parent, key, unnamed }
}

/**
 * The node's JSON path, built only for what is reported: a node holds no closure for it (the search
 * body's walk allocates half as much). A loop up the parents, not recursion: a body may nest
 * thousands deep.
 */
function pathOf(node: Node): string {
  const named: Node[] = []
  for (let at: Node | null = node; at?.parent; at = at.parent) if (!at.unnamed) named.push(at)
  let path = ''
  for (let index = named.length - 1; index >= 0; index--) path = childPath(path, named[index]!.key)
  return path
}

const named = (node: Node) => pathOf(node) || '$'

/**
 * Walks the whole body once, without recursion (the 16 KiB cap bounds the work): the JSON paths of
 * every personal-data field or e-mail-shaped value, and the first place the body is nested too deep
 * or a list too long. An e-mail-shaped key is reported by its parent's path, so that the answer
 * never repeats it. Paths are built only for what is reported.
 */
export function inspectBody(body: unknown): { personal: string[]; overLimit: ErrorDetail | null } {
  const personal: string[] = []
  let overLimit: ErrorDetail | null = null
  const pending: Node[] = [{ value: body, depth: 0, parent: null, key: '', unnamed: false }]
  for (let node = pending.pop(); node; node = pending.pop()) {
    const { value } = node
    if (node.depth > MAX_DEPTH) overLimit ??= { field: named(node), issue: `nested deeper than ${MAX_DEPTH} levels` }
    if (typeof value === 'string') {
      if (looksLikeEmail(value)) personal.push(named(node))
    } else if (Array.isArray(value)) {
      // The traveller list has its own limit and error (too_many_travellers, after validation).
      const isTravellers = node.depth === 1 && node.key === 'travellers'
      if (value.length > MAX_ARRAY_ITEMS && !isTravellers) overLimit ??= { field: named(node), issue: `at most ${MAX_ARRAY_ITEMS} items` }
      for (let index = value.length - 1; index >= 0; index--) pending.push(child(node, index, value[index]))
    } else if (value !== null && typeof value === 'object') {
      const keys = Object.keys(value)
      for (let index = keys.length - 1; index >= 0; index--) {
        const key = keys[index]!
        // A key that is not a plain name may carry the value itself ("phone +91…"): report its parent.
        // A personal-data name in words ("Date Of Birth") is ours to repeat, having recognised it.
        if (looksLikeEmail(key)) personal.push(named(node))
        else if (isPersonalDataName(key)) personal.push(PLAIN_NAME.test(key) && !node.unnamed ? childPath(pathOf(node), key) : named(node))
        else pending.push(child(node, key, (value as Record<string, unknown>)[key]))
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
