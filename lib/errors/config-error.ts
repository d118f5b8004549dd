// Thrown by createGatewayRouter when its options are wrong: a code, what is wrong, and the fix
// (http-proxy-middleware's habit), so a mis-configuration fails at start-up, not on a request.

export class GatewayConfigError extends Error {
  readonly code: string;

  constructor(code: string, problem: string, fix: string) {
    super(`${problem}\nFix: ${fix}`);
    this.name = 'GatewayConfigError';
    this.code = code;
  }
}
