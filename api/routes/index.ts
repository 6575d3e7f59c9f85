import type { RouteFactory } from '../app.js';
import { ledgerRoutes } from './ledger.js';

/** The routes of every service, mounted by the stack; each service adds its factory here as it lands. */
export const serviceRoutes: RouteFactory[] = [ledgerRoutes];
