// Messages a client reads name nothing it cannot open (docs/errors.md): a client of a host's API has
// neither the service contract nor this repository, so no error message, callback refusal or other
// text the gateway answers cites a contract section or a docs/ page. Read from the source: every
// string literal outside comments in the code paths that build answers (log lines and configuration
// errors speak to the operator and may cite docs/).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/markdown-docs.js';

const OPERATOR_TEXT = /\b(logger|logFailure)\.(info|warn|error)\(|GatewayConfigError\(|new TypeError\(|new Error\(/;
const CITATION = /§|docs\/[a-z-]+\.md|\bspec\b/;

/** String literals of a line, comments cut off (a `//` inside a string is kept). */
function literals(line: string): string[] {
  const found: string[] = [];
  const pattern = /'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`|\/\/.*$/g;
  for (const match of line.matchAll(pattern)) if (!match[0].startsWith('//')) found.push(match[0]);
  return found;
}

describe('client-facing text', () => {
  it('cites no contract section and no docs/ page', () => {
    const found: string[] = [];
    const files = readdirSync(path.join(ROOT, 'lib'), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'));
    for (const name of files) {
      // a call to the operator's logger may span lines: its arguments are operator text until it closes
      let inOperatorCall = false;
      readFileSync(path.join(ROOT, 'lib', name), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          const trimmed = line.trim();
          if (OPERATOR_TEXT.test(line)) inOperatorCall = !trimmed.endsWith(';');
          else if (inOperatorCall) {
            if (trimmed.endsWith(');')) inOperatorCall = false;
            return;
          }
          if (trimmed.startsWith('//') || trimmed.startsWith('*') || trimmed.startsWith('/*') || OPERATOR_TEXT.test(line)) return;
          for (const text of literals(line)) if (CITATION.test(text)) found.push(`lib/${name}:${index + 1}: ${text.slice(0, 120)}`);
        });
    }
    expect(found).toEqual([]);
  });
});
