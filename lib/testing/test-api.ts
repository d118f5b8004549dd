// The few test functions a contract suite needs, typed structurally so the package depends on no test
// runner: vitest's and jest's `{ describe, it, expect, beforeEach }` both fit as they are.

/** The matchers the suites use; a runner's `expect(x)` returns at least these. */
export interface ContractMatchers {
  toBe(expected: unknown): void;
  toStrictEqual(expected: unknown): void;
  toBeUndefined(): void;
  toHaveLength(length: number): void;
  toContain(item: unknown): void;
  /** For a promise: awaits its rejection. */
  rejects: { toThrow(): Promise<void> | void };
}

/** `{ describe, it, expect, beforeEach }` from the host's test runner (vitest, jest, …): free functions. */
export interface ContractTestApi {
  describe: (name: string, body: () => void) => void;
  it: (name: string, body: () => Promise<void>) => void;
  expect: (actual: unknown) => ContractMatchers;
  beforeEach: (hook: () => Promise<void> | void) => void;
}
