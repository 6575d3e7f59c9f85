export * from './audio.js';
export * from './dedupe.js';
export * from './segments.js';
export * from './vtt.js';
export * from './writers.js';
