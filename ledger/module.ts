import type { ServiceModule } from '../runtime/service.js';
import { ledgerRoutes } from './routes.js';

/** The findings ledger (docs/ledger.md): a JSON Schema file format for code-quality findings, validated over HTTP. */
export const ledgerService: ServiceModule = {
  name: 'findings ledger',
  routes: [ledgerRoutes],
};
