import type { RouteFactory } from '../app.js';
import { contextRoutes } from './context.js';
import { embeddingSettingsRoutes } from './embedding-settings.js';
import { indexJobRoutes } from './index-jobs.js';
import { indexSettingsRoutes } from './index-settings.js';
import { ledgerRoutes } from './ledger.js';
import { libraryRoutes } from './libraries.js';
import { notificationRoutes } from './notifications.js';
import { recipeRoutes } from './recipes.js';
import { transcriptionRoutes } from './transcription.js';

/** The routes of every service, mounted by the stack; each service adds its factory here as it lands. */
export const serviceRoutes: RouteFactory[] = [contextRoutes, libraryRoutes, indexJobRoutes, indexSettingsRoutes, embeddingSettingsRoutes, ledgerRoutes, transcriptionRoutes, notificationRoutes, recipeRoutes];
