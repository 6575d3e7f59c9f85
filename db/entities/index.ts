import { EventStream, JobEvent } from './job-event.js';
import { Job } from './job.js';

export { EventStream, Job, JobEvent };
/** Every entity, for the ORM config and the schema-drift test. */
export const entities = [Job, JobEvent, EventStream];
