/**
 * @module Turns schema validation errors into `error.details`: JSON paths and plain issues built
 * from the schema, never from the submitted value (Elysia's own message would echo it).
 */
import { ValueErrorType } from '@sinclair/typebox/errors'
import { childPath, isRepeatableName, type ErrorDetail } from '../errors'

interface SchemaError {
  type: number
  path: string
  schema: {
    'x-issue'?: string
    type?: string
    /**
     * On a union whose members each fix this property to a constant. (Not OpenAPI's `discriminator`,
     * which needs every member to be a named schema.)
     */
    'x-discriminator'?: string
    anyOf?: { properties?: Record<string, { const?: unknown }>; required?: string[] }[]
  }
  /** The value at `path`: read only to pick a union's member, never reported. */
  value?: unknown
  /** For a union: each member's own errors. */
  errors?: Iterable<SchemaError>[]
}

/** `/travellers/2/age` → `travellers[2].age`; the body itself is `$`. */
export function pointerToPath(pointer: string): string {
  const tokens = pointer
    .split('/')
    .slice(1)
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
  const path = tokens.reduce<string>((parent, token) => childPath(parent, /^\d+$/.test(token) ? Number(token) : token), '')
  return path || '$'
}

/**
 * The detail of one error, with the issue given or the schema's own. An unknown field whose name
 * the answer may not repeat (errors.ts) is reported on the object that holds it.
 */
function detailOf(error: SchemaError, issue = describe(error)): ErrorDetail {
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    const cut = error.path.lastIndexOf('/')
    const name = error.path
      .slice(cut + 1)
      .replace(/~1/g, '/')
      .replace(/~0/g, '~')
    if (!isRepeatableName(name)) return { field: pointerToPath(error.path.slice(0, cut)), issue: 'has a field that is not accepted (its name is not repeated)' }
  }
  return { field: pointerToPath(error.path), issue }
}

function describe(error: SchemaError): string {
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required'
    case ValueErrorType.ObjectAdditionalProperties:
      return 'is not an accepted field'
    default:
      return error.schema['x-issue'] ?? (error.schema.type ? `must be of type ${error.schema.type}` : 'is not valid')
  }
}

/**
 * A value that matches no member of a discriminated union: the problems of the member its
 * discriminator names (`new_end_date` "is required for extend_end_date"), or of the discriminator.
 */
function discriminatedDetails(error: SchemaError, key: string): ErrorDetail[] {
  const members = error.schema.anyOf ?? []
  const value = error.value
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [detailOf(error)]
  const chosen = (value as Record<string, unknown>)[key]
  const index = members.findIndex((member) => member.properties?.[key]?.const === chosen)
  const field = pointerToPath(`${error.path}/${key}`)
  if (index < 0) {
    const allowed = members.map((member) => member.properties?.[key]?.const).join(', ')
    return [{ field, issue: chosen === undefined ? 'is required' : `must be one of: ${allowed}` }]
  }
  const otherFields = new Set(members.flatMap((member) => Object.keys(member.properties ?? {})))
  return [...error.errors![index]!].map((inner) => {
    const issue =
      inner.type === ValueErrorType.ObjectRequiredProperty
        ? `is required for ${chosen}`
        : inner.type === ValueErrorType.ObjectAdditionalProperties && otherFields.has(inner.path.split('/').pop()!)
          ? `is not used by ${chosen}`
          : describe(inner)
    return detailOf(inner, issue)
  })
}

/**
 * A value that matches no member of a union of objects told apart by their fields (the clock's
 * advance: `{"days"}` or `{"to"}`): the problems of the one member whose required fields it has
 * (`days` "must be a whole number from 1 to 730"); none or several such members, the union's own issue.
 */
function memberDetails(error: SchemaError): ErrorDetail[] {
  const members = error.schema.anyOf ?? []
  const value = error.value
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !error.errors) return [detailOf(error)]
  const fitting = members.flatMap((member, index) => (member.required?.length && member.required.every((name) => name in value) ? [index] : []))
  if (fitting.length !== 1) return [detailOf(error)]
  return [...error.errors[fitting[0]!]!].map((inner) => detailOf(inner))
}

/** One detail per field, the first problem found for it (a missing field is only "required"). */
export function detailsFromSchemaErrors(errors: SchemaError[]): ErrorDetail[] {
  const byField = new Map<string, string>()
  for (const error of errors) {
    const key = error.type === ValueErrorType.Union ? error.schema['x-discriminator'] : undefined
    const details = key && error.errors ? discriminatedDetails(error, key) : error.type === ValueErrorType.Union ? memberDetails(error) : [detailOf(error)]
    for (const { field, issue } of details) if (!byField.has(field)) byField.set(field, issue)
  }
  return [...byField].map(([field, issue]) => ({ field, issue }))
}
