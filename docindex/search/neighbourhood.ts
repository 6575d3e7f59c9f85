import type { EntityManager } from '@mikro-orm/postgresql';
import type { KeptRows, SnippetRow } from './snippet-rows.js';

/**
 * Results that carry their neighbourhood. The parser cuts a section into a prose snippet and its code blocks, and a
 * long section into overlapping parts; a hit on one of them may stop mid-thought. When results are read as text
 * (where the token budget applies), results are taken in rank order as applyBudget does, and each is widened to the
 * neighbouring snippets of its section (same file, same breadcrumb, consecutive), nearest first, while the answer
 * stays within the budget and the widened result within a third of it (one long section does not crowd out the
 * other results). A neighbour that is itself a lower-ranked result is taken in and not repeated later.
 */

/** How far from a hit (in snippets of its file) a neighbour may be. */
const REACH = 8;

export type Neighbour = Omit<SnippetRow, 'versionId' | 'filePath'>;

type Hit = SnippetRow & { score: number };

/** A split section's parts are titled "<title> (part k/n)": the section's own title without that. */
const PART = / \(part \d+\/\d+\)$/;

/** The lines `next` repeats from the end of `previous` (consecutive parts of a split section overlap). */
export function overlapLines(previous: string, next: string): number {
  const a = previous.split('\n');
  const b = next.split('\n');
  for (let k = Math.min(a.length, b.length - 1); k > 0; k--) {
    let same = true;
    for (let i = 0; i < k && same; i++) same = a[a.length - k + i] === b[i];
    if (same) return k;
  }
  return 0;
}

/** One text for consecutive snippets of a section: prose as it is, code fenced, repeated overlap dropped. */
export function joinSection(parts: Pick<Neighbour, 'type' | 'title' | 'content' | 'language'>[]): string {
  const out: string[] = [];
  let previous: (typeof parts)[number] | undefined;
  for (const p of parts) {
    // The next part of a split prose section goes on where the previous one stopped: its repeated lines are dropped.
    if (previous?.type === 'info' && p.type === 'info' && PART.test(p.title ?? '') && previous.title?.replace(PART, '') === p.title?.replace(PART, '')) {
      const k = overlapLines(previous.content, p.content);
      if (k) {
        const rest = p.content.split('\n').slice(k).join('\n');
        if (rest) out[out.length - 1] += '\n' + rest;
        previous = p;
        continue;
      }
    }
    out.push(p.type === 'code' ? '```' + (p.language ?? '') + '\n' + p.content + '\n```' : p.content);
    previous = p;
  }
  return out.join('\n\n');
}

/**
 * The snippets around each hit in its file, in file order (at most REACH on either side): from `kept` for a hit whose
 * neighbours and their rows it holds, the others' read in one statement and kept (snippet-rows.ts).
 */
async function neighbours(em: EntityManager, hits: Hit[], kept?: KeptRows): Promise<Map<string, Neighbour[]>> {
  const found = new Map<string, Neighbour>();
  const missing: Hit[] = [];
  for (const h of hits) {
    const stamp = kept?.stampOf(h.id);
    const ids = stamp === undefined ? undefined : kept!.rows.neighbours(h.id, stamp);
    const rows = ids?.map((id) => kept!.rows.get(id, stamp!));
    if (rows?.every((r) => r !== undefined)) for (const r of rows) found.set(r!.id, r!);
    else missing.push(h);
  }
  if (missing.length) {
    const rows: { id: string; document_id: string; type: 'code' | 'info'; title: string | null; content: string; language: string | null; breadcrumb: string | null; token_count: number; ordinal: number }[] =
      await em.execute(
        `select s.id, s.document_id, s.type, s.title, s.content, s.language, s.breadcrumb, s.token_count, s.ordinal
         from json_to_recordset(?::json) as h(document_id text, ordinal int) join snippet s on s.document_id = h.document_id
         where s.ordinal between h.ordinal - ${REACH} and h.ordinal + ${REACH}
         order by s.document_id, s.ordinal`,
        [JSON.stringify(missing.map((h) => ({ document_id: h.documentId, ordinal: h.ordinal })))],
      );
    for (const r of rows) {
      found.set(r.id, { id: r.id, documentId: r.document_id, type: r.type, title: r.title, content: r.content, language: r.language, breadcrumb: r.breadcrumb, tokenCount: r.token_count, ordinal: r.ordinal });
    }
    if (kept) {
      for (const h of missing) {
        const stamp = kept.stampOf(h.id);
        if (stamp === undefined) continue;
        // A neighbour shares its hit's file, hence its path and version.
        const around = rows.filter((r) => r.document_id === h.documentId && Math.abs(r.ordinal - h.ordinal) <= REACH);
        for (const r of around) kept.rows.set({ ...found.get(r.id)!, versionId: h.versionId, filePath: h.filePath }, stamp);
        kept.rows.setNeighbours(h.id, stamp, [...new Set(around.map((r) => r.id))]); // two hits of a file read their shared rows twice
      }
    }
  }
  const byDoc = new Map<string, Neighbour[]>();
  for (const n of found.values()) {
    const list = byDoc.get(n.documentId);
    if (list) list.push(n);
    else byDoc.set(n.documentId, [n]);
  }
  for (const list of byDoc.values()) list.sort((a, b) => a.ordinal - b.ordinal);
  return byDoc;
}

/** One result may grow to this share of the budget (or stay as large as it already is). */
const SHARE = 3;

/**
 * The budget applied to ranked results (as applyBudget: in rank order while they fit, the first always), each kept
 * result widened to its section as described above. A widened result keeps the hit's id, score, file and
 * breadcrumb; its title is the section's, its content the section's snippets joined (joinSection), its token count
 * the sum of theirs.
 */
export async function budgetWithSections(em: EntityManager, ranked: Hit[], budget: number, kept?: KeptRows): Promise<Hit[]> {
  // Only results that could be kept need their neighbours: as many as fit without widening.
  let fit = 0;
  for (let used = 0; fit < ranked.length && (fit === 0 || used + ranked[fit]!.tokenCount <= budget); fit++) used += ranked[fit]!.tokenCount;
  if (!fit) return [];
  const docs = await neighbours(em, ranked.slice(0, fit), kept);
  let used = 0;
  const placed = new Set<string>(); // shown already, on its own or inside a widened result
  const out: Hit[] = [];
  for (const hit of ranked) {
    if (placed.has(hit.id)) continue;
    if (out.length && used + hit.tokenCount > budget) break;
    placed.add(hit.id);
    used += hit.tokenCount;
    const file = docs.get(hit.documentId) ?? [];
    const at = file.findIndex((n) => n.id === hit.id);
    let lo = at;
    let hi = at;
    let size = hit.tokenCount;
    const limit = Math.max(hit.tokenCount, Math.floor(budget / SHARE));
    // A few tokens more than the snippet's own for the fence and the blank line that join it.
    const cost = (n: Neighbour) => n.tokenCount + 4;
    // Only the very next snippet on either side: two hits far apart in one file leave a gap between their rows.
    const fits = (n: Neighbour | undefined, ordinal: number): n is Neighbour =>
      n !== undefined && n.ordinal === ordinal && n.breadcrumb === hit.breadcrumb && !placed.has(n.id) && used + cost(n) <= budget && size + cost(n) <= limit;
    // Nearest first: after, then before, then after again.
    while (at >= 0) {
      const after = file[hi + 1];
      const before = file[lo - 1];
      const next = fits(after, file[hi]!.ordinal + 1) ? after : fits(before, file[lo]!.ordinal - 1) ? before : undefined;
      if (!next) break;
      if (next === after) hi++;
      else lo--;
      used += cost(next);
      size += cost(next);
      placed.add(next.id);
    }
    if (lo === hi) {
      out.push(hit);
      continue;
    }
    const parts = file.slice(lo, hi + 1);
    const info = parts.find((p) => p.type === 'info');
    const content = joinSection(parts);
    out.push({
      ...hit,
      type: info ? 'info' : hit.type,
      title: (info ?? hit).title?.replace(PART, '') ?? hit.title,
      language: info ? null : hit.language,
      content,
      // Counted at index time, part by part (with what joining them adds), not again here: the budget was spent by
      // these counts, and the overlap joinSection drops only makes the section shorter.
      tokenCount: size,
    });
  }
  return out;
}
