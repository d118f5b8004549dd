// The GatewayError a synchronous call throws, for the table-driven unit specs of pure functions: any
// other error is rethrown, and a call that does not throw fails the test.
import { GatewayError } from '../../lib/errors/gateway-error.js';

export function thrown(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (GatewayError.is(error)) return error;
    throw error;
  }
  throw new Error('expected the call to throw a GatewayError');
}
