import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { Badge, ErrorText, formatDate, Notice, useAction } from '../components.js';
import { POLICY_HINT, refreshChoices } from '../sources.js';
import type { Library, RefreshSchedule } from '../types.js';

const enc = encodeURIComponent;

/**
 * A library's refresh schedule (a Temporal Schedule on the server): when it runs next, pausing and resuming it, and
 * its interval and version policy. A library refreshed `off` has none (404).
 */
export function RefreshPanel({ lib, onChanged }: { lib: Library; onChanged: () => Promise<void> }) {
  const [schedule, setSchedule] = useState<RefreshSchedule | null | undefined>(undefined);
  const action = useAction();
  const base = `/api/v1/libs/${enc(lib.id)}`;

  const load = async () => {
    try {
      setSchedule(await api<RefreshSchedule>(`${base}/refresh`));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) setSchedule(null);
      else throw err;
    }
  };
  useEffect(() => {
    void action.run(load);
  }, [lib.id, lib.refreshEvery, lib.versionPolicy]);

  const patch = (body: Record<string, unknown>) =>
    action.run(async () => {
      await api(base, { method: 'PATCH', body });
      await Promise.all([load(), onChanged()]);
    });

  return (
    <div class="versions" data-testid="refresh-schedule">
      <h4>Refresh schedule of {lib.id}</h4>
      {schedule === null && <p class="hint">Not refreshed on a schedule{lib.refreshEvery === 'off' ? ' (off)' : ''}.</p>}
      {schedule && (
        <>
          <p class="counts">
            <Badge status={schedule.paused ? 'paused' : 'active'} /> every <strong data-testid="refresh-every">{schedule.every}</strong> · next run {schedule.paused ? '—' : formatDate(schedule.nextRunAt)} · last
            run {formatDate(schedule.lastRunAt)} · versions <code>{schedule.policy}</code>
          </p>
          {schedule.note && <Notice>{schedule.note}</Notice>}
          <div class="actions">
            <button type="button" class="secondary" disabled={action.busy} onClick={() => patch({ refreshPaused: !schedule.paused })}>
              {schedule.paused ? 'Resume refresh' : 'Pause refresh'}
            </button>
          </div>
        </>
      )}
      <RefreshForm lib={lib} busy={action.busy} onSave={patch} />
      <ErrorText error={action.error} />
    </div>
  );
}

/** The interval and policy; an empty field goes back to the server's default (null). */
function RefreshForm({ lib, busy, onSave }: { lib: Library; busy: boolean; onSave: (body: Record<string, unknown>) => Promise<boolean> }) {
  const [every, setEvery] = useState(lib.refreshEvery ?? '');
  const [policy, setPolicy] = useState(lib.versionPolicy ?? '');
  const hintId = `policy-hint-${lib.id.replace(/\W+/g, '-')}`;
  const hasVersions = lib.source !== 'website';
  return (
    <form
      class="inline refresh-form"
      onSubmit={(e) => {
        e.preventDefault();
        void onSave({ refreshEvery: every || null, ...(hasVersions && { versionPolicy: policy.trim() || null }) });
      }}
    >
      <label>
        Refresh
        <select value={every} onChange={(e) => setEvery(e.currentTarget.value)}>
          {refreshChoices(lib.refreshEvery ?? '').map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </label>
      {hasVersions && (
        <label>
          Version policy
          <input value={policy} onInput={(e) => setPolicy(e.currentTarget.value)} placeholder="default" spellcheck={false} autocapitalize="off" aria-describedby={hintId} />
        </label>
      )}
      <button type="submit" disabled={busy}>
        Save schedule
      </button>
      {hasVersions && (
        <p class="hint field-hint wide" id={hintId}>
          Version policy: {POLICY_HINT} Empty: the server's default.
        </p>
      )}
    </form>
  );
}
