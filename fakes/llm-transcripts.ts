/**
 * The language-model fake's answers to transcription's translation and summary requests (transcription/derived/),
 * deterministic, and wrong on demand. Read from the request the way a model reads it: the numbered lines under
 * "Lines to translate:", the `[mm:ss]` lines of a summary part. FakeLlm (fakes/recipe-fakes.ts) answers with these
 * whenever the system prompt asks for one of them.
 *
 * A translation into `xx` is each line prefixed `[xx] ` (Russian and Greek ones are also spelled in their script,
 * so a check of the script passes). Misbehaviours, scripted per request:
 * - `untranslated`: every line as it was asked (the wrong language);
 * - `drop-line`: the last line left out;
 * - `merge-lines`: lines 1 and 2 answered as one line 1.
 */
export type TranscriptMisbehaviour = 'untranslated' | 'drop-line' | 'merge-lines';

const CYRILLIC: Record<string, string> = { a: 'а', b: 'б', c: 'ц', d: 'д', e: 'е', f: 'ф', g: 'г', h: 'х', i: 'и', j: 'й', k: 'к', l: 'л', m: 'м', n: 'н', o: 'о', p: 'п', q: 'к', r: 'р', s: 'с', t: 'т', u: 'у', v: 'в', w: 'в', x: 'кс', y: 'ы', z: 'з' };
const GREEK: Record<string, string> = { a: 'α', b: 'β', c: 'κ', d: 'δ', e: 'ε', f: 'φ', g: 'γ', h: 'η', i: 'ι', j: 'ι', k: 'κ', l: 'λ', m: 'μ', n: 'ν', o: 'ο', p: 'π', q: 'κ', r: 'ρ', s: 'σ', t: 'τ', u: 'υ', v: 'β', w: 'ω', x: 'ξ', y: 'υ', z: 'ζ' };

/** What the fake makes of a line in `language`. */
export function fakeTranslate(text: string, language: string): string {
  const base = language.split('-')[0]!.toLowerCase();
  const map = base === 'ru' ? CYRILLIC : base === 'el' ? GREEK : undefined;
  const spelled = map ? text.replace(/[a-z]/gi, (ch) => map[ch.toLowerCase()] ?? ch) : text;
  return `[${language}] ${spelled}`;
}

const section = (user: string, head: string, until: RegExp) => {
  const at = user.indexOf(`${head}\n`);
  if (at === -1) return [];
  const rest = user.slice(at + head.length + 1).split('\n');
  const end = rest.findIndex((l) => until.test(l));
  return end === -1 ? rest : rest.slice(0, end);
};

function translation(user: string, misbehave: TranscriptMisbehaviour | undefined): string {
  const language = /^Target language: (\S+)$/m.exec(user)?.[1] ?? 'xx';
  let lines = section(user, 'Lines to translate:', /^Context after/).flatMap((l) => {
    const m = /^(\d+)\. (.*)$/.exec(l);
    return m ? [{ n: Number(m[1]), text: misbehave === 'untranslated' ? m[2]! : fakeTranslate(m[2]!, language) }] : [];
  });
  if (misbehave === 'drop-line') lines = lines.slice(0, -1);
  if (misbehave === 'merge-lines' && lines.length > 1) lines = [{ n: 1, text: `${lines[0]!.text} ${lines[1]!.text}` }, ...lines.slice(2)];
  return JSON.stringify({ lines });
}

function summaryPart(system: string, user: string): string {
  const language = /Write in [^(]*\((\S+)\)/.exec(system)?.[1];
  const tag = language ? `[${language}] ` : '';
  const lines = user.split('\n').flatMap((l) => {
    // `[00:12] SPEAKER_00: text`: the speaker is no part of a title.
    const m = /^\[([\d:]+)\] (?:[^:\s]{1,40}: )?(.*)$/.exec(l);
    return m ? [{ at: m[1]!, text: m[2]! }] : [];
  });
  const picks = [...new Set([0, Math.floor(lines.length / 3), Math.floor((2 * lines.length) / 3)])].filter((i) => i < lines.length);
  return JSON.stringify({
    summary: `${tag}A part of ${lines.length} lines, from ${lines[0]?.at ?? '0:00'} on.`,
    chapters: picks.map((i) => ({ start: lines[i]!.at, title: `${tag}${lines[i]!.text.split(' ').slice(0, 4).join(' ')}`, summary: `${tag}${lines[i]!.text}` })),
  });
}

/** The answer to a translation or summary request, or undefined for any other request. */
export function transcriptAnswer(messages: { role: string; content: string }[], misbehave?: TranscriptMisbehaviour): string | undefined {
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  if (/translate numbered subtitle lines/i.test(system)) return translation(user, misbehave);
  if (/summarise a part of a timed transcript/i.test(system)) return summaryPart(system, user);
  if (/combine the summaries of the parts/i.test(system)) {
    return JSON.stringify({ summary: `The whole recording: ${user.split('\n').filter(Boolean).length} parts.` });
  }
  return undefined;
}
