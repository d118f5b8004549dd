// The error the official openai SDK rejects a call with, for the e2e specs that drive the gateway with
// it: a call that succeeds fails the test.
import type OpenAI from 'openai';

export type ApiError = InstanceType<typeof OpenAI.APIError>;

export const failureOf = (promise: Promise<unknown>): Promise<ApiError> =>
  promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error as ApiError,
  );
