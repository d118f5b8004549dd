// The default logger (lib/gateway/stderr-logger.ts): one JSON line per warn or error, pino's field
// names, nothing for info, caller text that cannot split a line, and no throw for a field that does
// not serialize or a writer that fails.
import { describe, expect, it } from 'vitest';
import { stderrLogger } from '../../lib/gateway/stderr-logger.js';

function captured(): { lines: string[]; logger: ReturnType<typeof stderrLogger> } {
  const lines: string[] = [];
  return { lines, logger: stderrLogger((line) => lines.push(line)) };
}

describe('stderrLogger', () => {
  it.each([
    ['warn', { provider: 'dashscope', status: 502 }, 'upstream failed'],
    ['error', { requestId: 'r-1', route: 'images.generations' }, 'request answered 500'],
    ['error', { model: 'x\n{"level":"error","msg":"forged"}' }, 'request answered 502'],
  ] as const)('%s writes one JSON line with %j', (level, fields, message) => {
    const { lines, logger } = captured();
    logger[level](fields, message);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith('\n')).toBe(true);
    expect(lines[0]!.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(lines[0]!)).toEqual({ level, time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), name: 'express-image-gateway', msg: message, ...fields });
  });

  it('writes nothing for info', () => {
    const { lines, logger } = captured();
    logger.info({ a: 1 }, 'task scheduler started');
    expect(lines).toEqual([]);
  });

  it('survives a field that does not serialize and a writer that throws', () => {
    const { lines, logger } = captured();
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    logger.error({ cycle }, 'odd');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', msg: 'odd', fields: 'unserializable' });
    const broken = stderrLogger(() => {
      throw new Error('EPIPE');
    });
    expect(() => broken.error({}, 'x')).not.toThrow();
  });
});
