import { describe, expect, it } from 'vitest';
import { libraryIdOfPackage, libraryIdOfSite, parseLibraryRef } from '../../docindex/ids.js';

describe('library ids of packages and sites', () => {
  it('reads scoped npm ids as one library, with or without a version', () => {
    expect(parseLibraryRef('/npm/@types/node')).toEqual({ libraryId: '/npm/@types/node', version: undefined });
    expect(parseLibraryRef('/npm/@types/node/20.1.0')).toEqual({ libraryId: '/npm/@types/node', version: '20.1.0' });
    expect(parseLibraryRef('/npm/fastify/5.2.0')).toEqual({ libraryId: '/npm/fastify', version: '5.2.0' });
    expect(parseLibraryRef('/pypi/requests')).toEqual({ libraryId: '/pypi/requests', version: undefined });
    // Only npm has scopes: elsewhere an @ segment is no library.
    expect(parseLibraryRef('/owner/@x/y')).toBeUndefined();
    expect(parseLibraryRef('/vercel/next.js/v14.2.0')).toEqual({ libraryId: '/vercel/next.js', version: 'v14.2.0' });
  });

  it('names packages by registry and sites by host and path', () => {
    expect(libraryIdOfPackage('npm', '@scope/name')).toBe('/npm/@scope/name');
    expect(libraryIdOfSite('https://docs.example.com/guide/')).toBe('/websites/docs_example_com_guide');
    expect(libraryIdOfSite('http://127.0.0.1:8080/')).toBe('/websites/127_0_0_1_8080');
    // Whatever the URL holds, the id is one safe segment.
    expect(libraryIdOfSite('https://x.dev/a/../b?q=1#f')).toBe('/websites/x_dev_b');
  });
});
