// Word-level text matching shared by the corpus indexes: case-insensitive, NFC, whole words, and a
// multi-word keyword matches as a phrase ("sales automation" does not match "automation of sales").

const WORD = /[\p{L}\p{N}]+/gu;

export function tokenize(text: string): string[] {
  return text.normalize('NFC').toLowerCase().match(WORD) ?? [];
}

export interface WordIndex {
  /** word → ascending item positions */
  words: Map<string, number[]>;
  /** per item: its words joined by single spaces, padded with one space each side (phrase checks) */
  norm: string[];
}

export function buildWordIndex(texts: readonly string[]): WordIndex {
  const words = new Map<string, number[]>();
  const norm = new Array<string>(texts.length);
  for (let i = 0; i < texts.length; i++) {
    const tokens = tokenize(texts[i]);
    norm[i] = ` ${tokens.join(' ')} `;
    for (const w of tokens) {
      const list = words.get(w);
      if (!list) words.set(w, [i]);
      else if (list[list.length - 1] !== i) list.push(i); // a word repeated in one text
    }
  }
  return { words, norm };
}

/** Ascending positions of the items that contain any of the keywords (each a word or a phrase). */
export function matchAny(index: WordIndex, keywords: readonly string[]): number[] {
  const hits: number[][] = [];
  for (const keyword of keywords) {
    const tokens = tokenize(keyword);
    if (tokens.length === 0) continue;
    const lists = tokens.map((t) => index.words.get(t) ?? []);
    // The rarest word's items are the only candidates; the phrase check confirms order and adjacency.
    const rarest = lists.reduce((a, b) => (b.length < a.length ? b : a));
    if (tokens.length === 1) hits.push(rarest);
    else {
      const phrase = ` ${tokens.join(' ')} `;
      hits.push(rarest.filter((i) => index.norm[i].includes(phrase)));
    }
  }
  return unionSorted(hits);
}

/** Union of ascending lists, ascending and without repeats. */
export function unionSorted(lists: readonly (readonly number[])[]): number[] {
  const nonEmpty = lists.filter((l) => l.length > 0);
  if (nonEmpty.length === 0) return [];
  if (nonEmpty.length === 1) return nonEmpty[0].slice();
  const all = nonEmpty.flat().sort((a, b) => a - b);
  return all.filter((v, i) => i === 0 || v !== all[i - 1]);
}
