// Preloaded (`--import`) into child processes of the specs: with GATEWAY_EXPRESS=4, `express` resolves
// to the `express4` alias, as vitest.config.ts arranges in-process, so a child runs the same major.
import { register } from 'node:module';

const hooks = `export async function resolve(specifier, context, next) {
  return next(specifier === 'express' ? 'express4' : specifier, context);
}`;

if (process.env.GATEWAY_EXPRESS === '4') register(`data:text/javascript,${encodeURIComponent(hooks)}`);
