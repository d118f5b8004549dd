// The C2PA reference implementation (contentauth/c2pa-rs), compiled to WebAssembly
// (`@contentauth/c2pa-wasm`, an optional peer dependency), loaded the first time `provenance` needs it
// (docs/provenance.md "Dependencies"). It reads and validates manifest stores and builds and embeds
// the operator's manifests. Its builder reads its source through the browser's `FileReaderSync`; under
// Node the gateway gives it the bytes in a blob of its own and a `FileReaderSync` that reads only those
// (installed once, and only when absent: a host that has one keeps it).
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';

/** The part of the package's API the gateway uses. */
interface C2paWasm {
  default(input: { module_or_path: Uint8Array }): Promise<unknown>;
  WasmReader: { fromBytes(format: string, bytes: Uint8Array, context?: string): Promise<{ json(): string; free(): void }> };
  WasmBuilder: {
    fromJson(json: string, context?: string): C2paBuilder;
  };
}

/** A manifest being built. */
export interface C2paBuilder {
  addAction(action: unknown): void;
  addAssertion(label: string, data: unknown): void;
  addIngredientFromBlob(json: string, format: string, blob: unknown): Promise<void>;
  sign(signer: { alg: string; reserveSize: number; sign(claim: Uint8Array): Promise<Uint8Array> }, identity: null, format: string, source: unknown): Promise<Uint8Array>;
  free(): void;
}

/** The bytes of an image as the builder reads them: sliced and read synchronously, never copied twice. */
export class BytesBlob {
  constructor(readonly bytes: Uint8Array) {}
  get size(): number {
    return this.bytes.byteLength;
  }
  get type(): string {
    return '';
  }
  slice(start = 0, end = this.bytes.byteLength): BytesBlob {
    return new BytesBlob(this.bytes.subarray(start, end));
  }
}

class BytesReaderSync {
  readAsArrayBuffer(blob: unknown): ArrayBuffer {
    if (!(blob instanceof BytesBlob)) throw new TypeError('this FileReaderSync reads only the C2PA builder’s own bytes');
    const { bytes } = blob;
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }
}

let loading: Promise<C2paWasm> | undefined;

/** The reference implementation, loaded once per process. */
export function c2paEngine(): Promise<C2paWasm> {
  loading ??= load().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** Where the reference implementation's WebAssembly is, or undefined when the optional peer is not installed. */
export function c2paWasmPath(): string | undefined {
  try {
    // as bullmq-installed.ts: the CommonJS bundle has __filename, the ESM one import.meta
    return createRequire(typeof __filename === 'string' ? __filename : import.meta.url).resolve('@contentauth/c2pa-wasm/c2pa.wasm');
  } catch {
    return undefined;
  }
}

async function load(): Promise<C2paWasm> {
  const wasmPath = c2paWasmPath();
  // createGatewayRouter refused the option without the package: this is a package removed since
  if (wasmPath === undefined) throw new Error('the provenance option needs the optional peer dependency @contentauth/c2pa-wasm');
  // an ECMAScript module only: import() keeps it loadable from the CommonJS build too
  const engine = (await import('@contentauth/c2pa-wasm')) as unknown as C2paWasm;
  await engine.default({ module_or_path: await readFile(wasmPath) });
  const scope = globalThis as { FileReaderSync?: unknown };
  if (scope.FileReaderSync === undefined) Object.defineProperty(globalThis, 'FileReaderSync', { value: BytesReaderSync, configurable: true, writable: true });
  return engine;
}
