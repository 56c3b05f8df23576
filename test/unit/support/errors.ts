import { expect } from 'bun:test'
import { ApiError } from '../../../src/errors'

/** The ApiError `run` throws (fails the test if it throws nothing or something else). */
export function thrown(run: () => unknown): ApiError {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError)
    return error as ApiError
  }
  throw new Error('expected an ApiError, nothing was thrown')
}

/** What the error `run` throws would show on the wire: its status, code, and the fields its details name. */
export function refusal(run: () => unknown): { status: number; code: string; fields?: string[] } {
  const error = thrown(run)
  const fields = error.details?.map((detail) => detail.field)
  return { status: error.status, code: error.code, ...(fields && { fields }) }
}

/** The ApiError `promise` rejects with (fails the test if it resolves or rejects with something else). */
export async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const outcome = await promise.then(
    () => ({ resolved: true }),
    (error: unknown) => ({ resolved: false, error }),
  )
  return thrown(() => {
    if (!outcome.resolved) throw (outcome as { error: unknown }).error
  })
}
