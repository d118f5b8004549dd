// The places that say which vendors the gateway speaks name every provider of the registry
// (lib/providers/registry.ts), so adding a provider cannot leave them naming a few: README.md's
// opening, docs/getting-started.md "What you need", and package.json's description (the npm page).
// docs/routes.md's tables are checked against the registry in routes-table.spec.ts.
// docs/contributing.md "Documentation"
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROVIDER_NAMES } from '../../lib/providers/registry.js';
import { ROOT, sections } from '../helpers/markdown-docs.js';

/** The providers a text does not name (`openai` is named by "OpenAI-compatible", `fal` by "fal.ai", `vertex` by "Vertex AI"). */
function unnamed(text: string): string[] {
  return PROVIDER_NAMES.filter((provider) => !new RegExp(`\\b${provider}\\b`, 'i').test(text));
}

function read(name: string): string {
  return readFileSync(path.join(ROOT, name), 'utf8');
}

// the docs do not depend on the Express major: checked once, in the Express 5 run
describe.skipIf(process.env.GATEWAY_EXPRESS === '4')('vendor lists against the provider registry', () => {
  it("README.md's opening (up to its first section) names every provider", () => {
    const readme = read('README.md');
    const opening = readme.slice(0, readme.indexOf('\n## '));
    expect(opening.length).toBeGreaterThan(100);
    expect(unnamed(opening)).toEqual([]);
  });

  it('docs/getting-started.md "What you need" names every provider', () => {
    const needs = sections(read('docs/getting-started.md'), 2).get('What you need');
    expect(needs).toBeDefined();
    expect(unnamed(needs!)).toEqual([]);
  });

  it("package.json's description names every provider", () => {
    const { description } = JSON.parse(read('package.json')) as { description: string };
    expect(unnamed(description)).toEqual([]);
  });
});
