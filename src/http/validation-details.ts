/**
 * @module Turns schema validation errors into `error.details`: JSON paths and plain issues built
 * from the schema, never from the submitted value (Elysia's own message would echo it).
 */
import { ValueErrorType } from '@sinclair/typebox/errors'
import { childPath, type ErrorDetail } from '../errors'

interface SchemaError {
  type: number
  path: string
  schema: { 'x-issue'?: string; type?: string }
}

/** `/travellers/2/age` → `travellers[2].age`; the body itself is `$`. */
export function pointerToPath(pointer: string): string {
  const tokens = pointer.split('/').slice(1).map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
  const path = tokens.reduce<string>((parent, token) => childPath(parent, /^\d+$/.test(token) ? Number(token) : token), '')
  return path || '$'
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

/** One detail per field, the first problem found for it (a missing field is only "required"). */
export function detailsFromSchemaErrors(errors: SchemaError[]): ErrorDetail[] {
  const byField = new Map<string, string>()
  for (const error of errors) {
    const field = pointerToPath(error.path)
    if (!byField.has(field)) byField.set(field, describe(error))
  }
  return [...byField].map(([field, issue]) => ({ field, issue }))
}
