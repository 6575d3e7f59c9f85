import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';

/**
 * Recorded workflow histories, one JSON file per scenario. The JSON is the History message as protobufjs writes it
 * (enums by name, 64-bit numbers and bytes as strings): @temporalio/common's historyToJSON and historyFromJSON
 * cannot be used with the protobufjs copies this install resolves.
 */
export const HISTORIES_DIR = fileURLToPath(new URL('../fixtures/histories', import.meta.url));
const History = proto.temporal.api.history.v1.History;
export type RecordedHistory = proto.temporal.api.history.v1.History;

/**
 * Saves a run's history with its workflow id: a replay must run under the id the workflow saw (workflows/slots.ts
 * names a slot request after it), and a history does not say it.
 */
export async function saveHistory(name: string, handle: WorkflowHandle): Promise<void> {
  const history = await handle.fetchHistory();
  const json = History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String });
  await fs.mkdir(HISTORIES_DIR, { recursive: true });
  await fs.writeFile(path.join(HISTORIES_DIR, `${name}.json`), `${JSON.stringify({ workflowId: handle.workflowId, history: json }, null, 1)}\n`);
}

export interface Recorded {
  name: string;
  workflowId: string;
  workflowType: string;
  history: RecordedHistory;
}

export async function loadHistories(): Promise<Recorded[]> {
  const names = (await fs.readdir(HISTORIES_DIR)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(
    names.map(async (file) => {
      const saved = JSON.parse(await fs.readFile(path.join(HISTORIES_DIR, file), 'utf8')) as { workflowId: string; history: Record<string, unknown> };
      const history = History.fromObject(saved.history);
      const started = history.events[0]?.workflowExecutionStartedEventAttributes;
      return { name: file.replace(/\.json$/, ''), workflowId: saved.workflowId, workflowType: started?.workflowType?.name ?? '?', history };
    }),
  );
}
