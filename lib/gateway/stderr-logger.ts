// The logger a gateway writes to when the host gives none (docs/observability.md "Logs"): server-side
// failures must be seen somewhere, so `warn` and `error` go to stderr as one JSON line each (pino's
// field names: level, time, msg), and `info` stays quiet. JSON.stringify escapes every control
// character, so caller text in a field (a model name with a newline) cannot forge another line.
import type { Logger } from '../types.js';

/** Writes one line; replaceable in tests. */
export type LineWriter = (line: string) => void;

const toStderr: LineWriter = (line) => {
  process.stderr.write(line);
};

export function stderrLogger(write: LineWriter = toStderr): Logger {
  const line = (level: 'warn' | 'error', fields: Record<string, unknown>, message: string): void => {
    let text: string;
    try {
      text = JSON.stringify({ level, time: new Date().toISOString(), name: 'express-image-gateway', msg: message, ...fields });
    } catch {
      // a field that does not serialize (a cycle) must not turn a log line into a crash
      text = JSON.stringify({ level, time: new Date().toISOString(), name: 'express-image-gateway', msg: message, fields: 'unserializable' });
    }
    try {
      write(`${text}\n`);
    } catch {
      // a closed stderr is no reason to fail a request
    }
  };
  return {
    info: () => {},
    warn: (fields, message) => line('warn', fields, message),
    error: (fields, message) => line('error', fields, message),
  };
}
