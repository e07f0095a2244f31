/**
 * Token-level agreement of an extracted text with a reference text, as the article-extraction-benchmark
 * (scrapinghub/article-extraction-benchmark, `evaluate.py`) scores article bodies: both texts are cut into
 * word tokens and compared as bags of words. Used by the content extractor's tests and its bench
 * (bench/content.ts); the tool itself does not score.
 */

/** Runs of Unicode letters, marks and digits; everything else (spaces, punctuation, symbols) separates tokens. */
const TOKEN = /[\p{L}\p{M}\p{N}]+/gu;

/** The lower-cased word tokens of `text`, in order (`"Don't stop!"` gives `['don', 't', 'stop']`). */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(TOKEN) ?? [];
}

/** Precision, recall and their harmonic mean, each 0-1. */
export interface TokenScore {
  precision: number;
  recall: number;
  f1: number;
}

/**
 * Bag-of-words precision, recall and F1 of `predicted` against `expected`: the overlap is the multiset
 * intersection of their tokens ({@link tokenize}); a token found twice in both counts twice, found three times in
 * one and once in the other counts once. precision = overlap / predicted tokens, recall = overlap / expected
 * tokens. Two empty texts score 1 on all three; one empty text against a non-empty one scores 0.
 */
export function tokenF1(predicted: string, expected: string): TokenScore {
  const got = tokenize(predicted);
  const want = tokenize(expected);
  if (got.length === 0 && want.length === 0) return { precision: 1, recall: 1, f1: 1 };
  const left = new Map<string, number>();
  for (const t of want) left.set(t, (left.get(t) ?? 0) + 1);
  let overlap = 0;
  for (const t of got) {
    const n = left.get(t) ?? 0;
    if (n > 0) {
      overlap++;
      left.set(t, n - 1);
    }
  }
  const precision = got.length ? overlap / got.length : 0;
  const recall = want.length ? overlap / want.length : 0;
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { precision, recall, f1 };
}
