import os from 'node:os';
import { Context } from '@temporalio/activity';

export function createHealthActivities() {
  return {
    /** Answers with the identity of the worker that picked the task up. */
    async ping(): Promise<string> {
      return Context.current().info.taskQueue + '@' + os.hostname() + ':' + process.pid;
    },
  };
}
export type HealthActivities = ReturnType<typeof createHealthActivities>;
