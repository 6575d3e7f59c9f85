import { describe, expect, it } from 'vitest';
import { gitHostRepository, repositoryUrl } from '../../../../docindex/sources/registries/repository.js';

/** Repository references as registries write them, made https URLs (docindex/sources/registries/repository.ts). */
describe('repositoryUrl', () => {
  it('reads the forms npm allows', () => {
    const cases: [string, string | null][] = [
      ['github:acme/kit', 'https://github.com/acme/kit'],
      ['gitlab:acme/kit', 'https://gitlab.com/acme/kit'],
      ['bitbucket:acme/kit', 'https://bitbucket.org/acme/kit'],
      ['acme/kit', 'https://github.com/acme/kit'],
      ['git+https://github.com/acme/kit.git', 'https://github.com/acme/kit'],
      ['git+ssh://git@github.com/acme/kit.git', 'https://github.com/acme/kit'],
      ['git://github.com/acme/kit.git', 'https://github.com/acme/kit'],
      ['git@github.com:acme/kit.git', 'https://github.com/acme/kit'],
      ['https://user:secret@git.example.com:8443/team/kit.git#v1', 'https://git.example.com:8443/team/kit'],
      ['http://git.example.com/team/kit/', 'http://git.example.com/team/kit'],
      ['gist:11081aaa281', null],
      ['file:../kit', null],
      ['https://github.com/', null],
      ['java script:alert(1)', null],
      ['', null],
    ];
    for (const [raw, want] of cases) expect(repositoryUrl(raw), raw).toBe(want);
  });
});

describe('gitHostRepository', () => {
  it('trims a page on a git host to its repository, and refuses other sites', () => {
    expect(gitHostRepository('https://github.com/acme/kit/tree/main/docs')).toBe('https://github.com/acme/kit');
    expect(gitHostRepository('https://github.com/acme/kit/issues')).toBe('https://github.com/acme/kit');
    expect(gitHostRepository('https://gitlab.com/group/sub/kit/-/tree/main')).toBe('https://gitlab.com/group/sub/kit');
    expect(gitHostRepository('https://gitlab.example.com/team/kit')).toBe('https://gitlab.example.com/team/kit');
    expect(gitHostRepository('https://kit.readthedocs.io/en/latest/')).toBeNull();
    expect(gitHostRepository('https://github.com/acme')).toBeNull();
  });
});
