import fs from 'node:fs/promises';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { gristmillCacheDir, isExecutable, onPath, toolNotFound } from '../../core/binaries.js';
import { fetchMavenArtifact } from '../../core/maven.js';
import { workflowBundle } from '../../runtime/worker.js';
import type { JobActivities } from '../../activities/jobs.js';
import { PROBE_WORKFLOWS } from './stack.js';

/**
 * Temporal's time-skipping test server for workflow unit tests (docs/jobs.md, "Testing workflows"). @temporalio/testing
 * would download it from Temporal's CDN; we get the same server, the Java SDK's, as a Maven artifact through Maven's
 * own client (so a mirror in ~/.m2/settings.xml applies), once per machine, into the user cache beside the Temporal
 * CLI (runtime/temporal.ts), behind a small wrapper script that runs it.
 */
export const TEST_SERVER_VERSION = '1.32.0';
const ARTIFACT = { groupId: 'io.temporal', artifactId: 'temporal-test-server', version: TEST_SERVER_VERSION };
const MAIN_CLASS = 'io.temporal.testserver.TestServer';
/** A build that takes longer than this was killed: its lock is taken over. */
const STALE_LOCK_MS = 10 * 60_000;

export function testServerDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(gristmillCacheDir(env), 'temporal-test-server', `v${TEST_SERVER_VERSION}`);
}

/** The server takes its port as its first argument (that is how @temporalio/core-bridge starts it). */
const wrapper = (lib: string) => `#!/bin/sh
# ${ARTIFACT.groupId}:${ARTIFACT.artifactId}:${ARTIFACT.version}, resolved by Maven (test/support/time-skipping.ts)
exec "\${JAVA_HOME:+$JAVA_HOME/bin/}java" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx512m -cp '${lib}/*' ${MAIN_CLASS} "$@"
`;

async function javaFound(env: NodeJS.ProcessEnv): Promise<boolean> {
  if (env.JAVA_HOME && (await isExecutable(path.join(env.JAVA_HOME, 'bin', 'java')))) return true;
  return (await onPath('java', env)) !== undefined;
}

/** Runs `fn` alone among the processes on this machine (parallel test files all want the server at once). */
async function withLock<T>(lock: string, fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      await fs.mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const since = await fs.stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (since > STALE_LOCK_MS) await fs.rm(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lock, { recursive: true, force: true });
  }
}

async function build(dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const mvn = await onPath('mvn', env);
  const failures = [...(mvn ? [] : ['mvn is not on PATH']), ...((await javaFound(env)) ? [] : ['java is not on PATH nor in JAVA_HOME'])];
  if (!mvn || failures.length) {
    throw toolNotFound("Temporal's time-skipping test server cannot be provisioned", failures, [
      'install Java (17 or later) and Maven: apt-get install maven (it brings a Java runtime), or brew install maven',
      'set TEMPORAL_TEST_SERVER to an executable that runs the test server with its port as the first argument',
    ]);
  }
  // Built beside its place and moved in whole: nothing ever sees half a classpath.
  const work = await fs.mkdtemp(path.join(path.dirname(dir), '.build-'));
  try {
    await fetchMavenArtifact(ARTIFACT, path.join(work, 'lib'), { withDependencies: true, env });
    const script = path.join(work, 'temporal-test-server');
    await fs.writeFile(script, wrapper(path.join(dir, 'lib')), { mode: 0o755 });
    await fs.rm(dir, { recursive: true, force: true }); // a folder without its wrapper: a build that was interrupted
    await fs.rename(work, dir);
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/** The test server's executable: TEMPORAL_TEST_SERVER, or the cached wrapper, built with Maven on first use. */
export async function findTestServer(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (env.TEMPORAL_TEST_SERVER) {
    if (await isExecutable(env.TEMPORAL_TEST_SERVER)) return env.TEMPORAL_TEST_SERVER;
    throw new Error(`TEMPORAL_TEST_SERVER points at ${env.TEMPORAL_TEST_SERVER}, which is not an executable file`);
  }
  const dir = testServerDir(env);
  const executable = path.join(dir, 'temporal-test-server');
  if (await isExecutable(executable)) return executable;
  await fs.mkdir(path.dirname(dir), { recursive: true });
  await withLock(`${dir}.lock`, async () => {
    if (!(await isExecutable(executable))) await build(dir, env); // another process may have built it meanwhile
  });
  return executable;
}

let runtimeInstalled = false;

/** A time-skipping environment of this test file's own (time skips for the whole server, so files never share one). */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const path = await findTestServer();
  if (!runtimeInstalled) {
    runtimeInstalled = true;
    Runtime.install({ logger: new DefaultLogger('ERROR') }); // the stubs' planned failures and the workers' state changes are noise here
  }
  return TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
}

/** The workflows the time-skipping tests run: production's, plus the fixtures' slot holder (test/fixtures/workflows.ts). */
export function testWorkflowBundle(): Promise<WorkflowBundleOption> {
  return workflowBundle([PROBE_WORKFLOWS]);
}

/**
 * Runs `body` with a worker on `taskQueue` that runs the bundle's workflows and `activities` (plain functions
 * standing in for the real ones); the worker stops when `body` ends.
 */
export async function withWorker<T>(
  env: TestWorkflowEnvironment,
  o: { taskQueue: string; bundle: WorkflowBundleOption; activities: object },
  body: () => Promise<T>,
): Promise<T> {
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: o.taskQueue, workflowBundle: o.bundle, activities: o.activities });
  return worker.runUntil(body);
}

export interface JobRecord {
  started: number;
  finished: Parameters<JobActivities['finishJob']>[0][];
}

/** Stand-ins for the job bookkeeping every job workflow does (workflows/job-lifecycle.ts), recording its endings. */
export function jobActivityStubs(): { record: JobRecord; activities: Pick<JobActivities, 'startJob' | 'finishJob' | 'reportProgress'> } {
  const record: JobRecord = { started: 0, finished: [] };
  return {
    record,
    activities: {
      startJob: async () => {
        record.started++;
      },
      finishJob: async (input) => {
        record.finished.push(input);
      },
      reportProgress: async () => undefined,
    },
  };
}
