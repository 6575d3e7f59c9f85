import type { Config } from '../core/config.js';
import { secretBox } from '../core/secrets.js';
import { outboundGuard } from '../outbound/guard.js';
import { gitHostTokenContext, type Library } from './entities/library.js';
import type { RemoteAccess } from './git.js';

/**
 * How git reaches a library's remote: through the outbound guard, with its token opened for the command about to
 * run (docindex/git.ts).
 */
export function remoteAccess(config: Config, lib: Pick<Library, 'id' | 'gitHostToken'>, signal?: AbortSignal): RemoteAccess {
  const token = lib.gitHostToken ? secretBox(config).open(lib.gitHostToken, gitHostTokenContext(lib.id)) : null;
  return { guard: outboundGuard(config), token, ...(signal && { signal }) };
}

