import { type PhaseEntry, type PhaseName, PHASES, type PhaseStep, type PhaseStepName } from './contract.js';

/** Pure helpers for an item's phase entries. */
export function initialPhases(): PhaseEntry[] {
  return PHASES.map((name) => ({ name, status: 'pending', progress: 0 }));
}

/** The phases with `name` changed by `change`; the others as they are (a missing entry is added in order). */
export function withPhase(phases: readonly PhaseEntry[], name: PhaseName, change: (p: PhaseEntry) => PhaseEntry): PhaseEntry[] {
  const byName = new Map(phases.map((p) => [p.name, p]));
  return PHASES.map((n) => {
    const p = byName.get(n) ?? { name: n, status: 'pending', progress: 0 };
    return n === name ? clean(change(p)) : p;
  });
}

/** Optional fields that are unset are left out, so the JSON carries only what is known. */
function clean(p: PhaseEntry): PhaseEntry {
  return Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)) as PhaseEntry;
}

/** The phase's steps with `step` in its place (replacing the one of its name, else added last). */
export function withStep(phases: readonly PhaseEntry[], name: PhaseName, step: PhaseStep): PhaseEntry[] {
  return withPhase(phases, name, (p) => {
    const steps = p.steps ?? [];
    const at = steps.findIndex((s) => s.name === step.name);
    const cleaned = clean(step as unknown as PhaseEntry) as unknown as PhaseStep;
    return { ...p, steps: at === -1 ? [...steps, cleaned] : steps.map((s, i) => (i === at ? cleaned : s)) };
  });
}

export function stepOf(phases: readonly PhaseEntry[], name: PhaseName, step: PhaseStepName): PhaseStep | undefined {
  return phases.find((p) => p.name === name)?.steps?.find((s) => s.name === step);
}

/** A run that ended leaves no phase or step running: the one that was is marked failed. */
export function failRunning(phases: readonly PhaseEntry[], at: string): PhaseEntry[] {
  const failSteps = (p: PhaseEntry) =>
    p.steps?.some((s) => s.status === 'in_progress')
      ? { ...p, steps: p.steps.map((s) => (s.status === 'in_progress' ? { ...s, status: 'error' as const, completedAt: at } : s)) }
      : p;
  return phases.map((p) => failSteps(p.status === 'in_progress' ? clean({ ...p, status: 'error', completedAt: at }) : p));
}

/** The job's overall progress (0-100) when a phase starts and when it ends: a third each. */
export function overallProgress(name: PhaseName, end: boolean): number {
  const i = PHASES.indexOf(name);
  return Math.round(((i + (end ? 1 : 0)) * 100) / PHASES.length);
}
