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
