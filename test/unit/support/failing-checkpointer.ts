/** @module A checkpoint worker that fails as it starts (checkpointer.test.ts). */
throw new Error('the checkpointer failed to start')
