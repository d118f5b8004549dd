// Running the Lua scripts of the Redis stores (task records, the delivery log, endpoint health): each is
// named by its SHA1 with EVALSHA, so its text is sent once per Redis server, not once per call; after a
// restart or SCRIPT FLUSH the server answers NOSCRIPT and EVAL loads it again.
import { createHash } from 'node:crypto';

/** The two commands a script runner needs (an ioredis client has them). */
export interface ScriptClient {
  evalsha(sha1: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>;
}

// a script's SHA1, computed once per script text
const SHAS = new Map<string, string>();

function sha1Of(script: string): string {
  let sha = SHAS.get(script);
  if (sha === undefined) {
    sha = createHash('sha1').update(script).digest('hex');
    SHAS.set(script, sha);
  }
  return sha;
}

/** Runs `script` on `client` with its keys and arguments. */
export function scriptRunner(client: ScriptClient): (script: string, keys: readonly string[], ...args: string[]) => Promise<unknown> {
  return async (script, keys, ...args) => {
    try {
      return await client.evalsha(sha1Of(script), keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(script, keys.length, ...keys, ...args);
    }
  };
}
