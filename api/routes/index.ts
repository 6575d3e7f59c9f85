import type { RouteFactory } from '../app.js';
import { contextRoutes } from '../../docindex/routes/context.js';
import { embeddingSettingsRoutes } from '../../docindex/routes/embedding-settings.js';
import { indexJobRoutes } from '../../docindex/routes/index-jobs.js';
import { indexSettingsRoutes } from '../../docindex/routes/index-settings.js';
import { ledgerRoutes } from '../../ledger/routes.js';
import { libraryRoutes } from '../../docindex/routes/libraries.js';
import { notificationRoutes } from './notifications.js';
import { recipeRoutes } from '../../recipes/routes.js';
import { transcriptionRoutes } from '../../transcription/routes.js';

/** The routes of every service, mounted by the stack; each service adds its factory here as it lands. */
export const serviceRoutes: RouteFactory[] = [contextRoutes, libraryRoutes, indexJobRoutes, indexSettingsRoutes, embeddingSettingsRoutes, ledgerRoutes, transcriptionRoutes, notificationRoutes, recipeRoutes];
