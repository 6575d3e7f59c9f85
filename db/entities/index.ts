import { EventStream, JobEvent } from './job-event.js';
import { Job } from './job.js';
import { PushSubscription } from './push-subscription.js';

export { EventStream, Job, JobEvent, PushSubscription };

/** The platform's entities (jobs, their events, web push); each service declares its own in its module.ts. */
export const platformEntities = [Job, JobEvent, EventStream, PushSubscription];
