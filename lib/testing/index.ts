// The `express-image-gateway/testing` entry: contract suites for what hosts implement themselves, and the
// skipping clock that makes the gateway's waits of seconds take no time in a test.
// Nothing in the gateway imports this folder (.dependency-cruiser.cjs), so it never ships in the router's bundle.
export { describeTaskStoreContract, sampleResult, sampleTask, type SampleTaskOverrides } from './task-store-contract.js';
export type { ContractMatchers, ContractTestApi } from './test-api.js';
export { type SkippingClock, useSkippingClock } from './skipping-clock.js';
