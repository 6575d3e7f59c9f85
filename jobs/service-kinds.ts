import { indexJobKind } from '../docindex/kind.js';
import { recipeKind } from '../recipes/kind.js';
import { transcriptionKind } from '../transcription/kind.js';
import type { JobKind } from './kinds.js';

/** The job kinds of the services; each service adds its own as it lands. */
export const serviceJobKinds: JobKind[] = [indexJobKind, transcriptionKind, recipeKind];
