// WebAssembly's JavaScript API is a global in Node, but its types ship only with TypeScript's DOM library, which a
// server project does not load. This is the subset docindex/search/simd.ts and docindex/search/vectors.ts use.
declare global {
  namespace WebAssembly {
    interface MemoryDescriptor {
      /** In 64 KiB pages. */
      initial: number;
      maximum?: number;
      shared?: boolean;
    }
    class Memory {
      constructor(descriptor: MemoryDescriptor);
      readonly buffer: ArrayBuffer;
    }
    class Module {
      constructor(bytes: Uint8Array<ArrayBuffer>);
    }
    class Instance {
      constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
      readonly exports: Record<string, unknown>;
    }
  }
}

export {};
