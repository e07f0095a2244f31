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

// ---------------------------------------------------------------------------------------------------------------
// The article-extraction-benchmark's own metric (scrapinghub/article-extraction-benchmark, `evaluate.py`), used by
// the bench on that benchmark's pages (bench/content.ts, corpus `scrapinghub`). It differs from tokenF1 above in
// three ways: tokens keep their case, they are compared as shingles of 4 consecutive tokens, and the corpus figure is
// the F1 of the mean precision and the mean recall (not the mean of the pages' F1).

/**
 * Python's `re.compile(r'\w+', re.UNICODE)`: letters (Lu, Ll, Lt, Lm, Lo), numbers (Nd, Nl, No) and `_`; marks
 * (Mn, Mc) separate tokens, as `str.isalnum` is false for them. (Checked against Python 3.11 on every code point:
 * identical up to Unicode 14; JavaScript also matches letters assigned later.) Case is kept: `re.IGNORECASE`
 * does not change what `findall` returns.
 */
const PY_WORD = /[\p{L}\p{N}_]+/gu;
/** `evaluate.py`'s `ngram_n`. */
export const SHINGLE_SIZE = 4;

/** The tokens of `text` as `evaluate.py`'s `_tokenize` gives them (case kept). */
export function benchmarkTokens(text: string): string[] {
  return text.match(PY_WORD) ?? [];
}

/**
 * `evaluate.py`'s `_ngrams`: every run of {@link SHINGLE_SIZE} consecutive tokens; a text of fewer tokens gives
 * one shingle of all of them, an empty one none. Counted by shingle (tokens joined by a space, which no token holds).
 */
function shingles(text: string): Map<string, number> {
  const tokens = benchmarkTokens(text);
  const out = new Map<string, number>();
  const last = Math.max(1, tokens.length - SHINGLE_SIZE + 1);
  for (let i = 0; i < last; i++) {
    const part = tokens.slice(i, i + SHINGLE_SIZE);
    if (part.length === 0) continue;
    const key = part.join(' ');
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

/** One page's true positives, false positives and false negatives over shingles, scaled to add up to 1 (or all 0). */
export interface ShingleCounts {
  tp: number;
  fp: number;
  fn: number;
}

/**
 * `evaluate.py`'s `string_shingle_matching(true=expected, pred=predicted)`: per shingle, tp the smaller count,
 * fp what `predicted` has more, fn what `expected` has more; the three are divided by their sum ("so that longer
 * texts do not have more weight").
 */
export function shingleCounts(predicted: string, expected: string): ShingleCounts {
  const want = shingles(expected);
  const got = shingles(predicted);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const [key, p] of got) {
    const t = want.get(key) ?? 0;
    tp += Math.min(t, p);
    fp += Math.max(0, p - t);
  }
  for (const [key, t] of want) fn += Math.max(0, t - (got.get(key) ?? 0));
  const s = tp + fp + fn;
  return s > 0 ? { tp: tp / s, fp: fp / s, fn: fn / s } : { tp, fp, fn };
}

/** `evaluate.py`'s `precision_score`. */
export function shinglePrecision({ tp, fp, fn }: ShingleCounts): number {
  if (fp === 0 && fn === 0) return 1;
  if (tp === 0 && fp === 0) return 0;
  return tp / (tp + fp);
}

/** `evaluate.py`'s `recall_score`. */
export function shingleRecall({ tp, fp, fn }: ShingleCounts): number {
  if (fp === 0 && fn === 0) return 1;
  if (tp === 0 && fn === 0) return 0;
  return tp / (tp + fn);
}

/**
 * `evaluate.py`'s `metrics_from_tp_fp_fns` over pages (without its bootstrap intervals): precision is the mean of
 * the pages' precision over the pages that predicted something (tp + fp > 0), recall the mean of their recall
 * over the pages that expected something (tp + fn > 0), F1 the harmonic mean of those two means. NaN for no pages,
 * where Python raises.
 */
export function shingleMetrics(pages: readonly ShingleCounts[]): TokenScore {
  const ps = pages.filter((c) => c.tp + c.fp > 0).map(shinglePrecision);
  const rs = pages.filter((c) => c.tp + c.fn > 0).map(shingleRecall);
  const precision = ps.length ? ps.reduce((a, b) => a + b, 0) / ps.length : Number.NaN;
  const recall = rs.length ? rs.reduce((a, b) => a + b, 0) / rs.length : Number.NaN;
  return { precision, recall, f1: (2 * precision * recall) / (precision + recall) };
}

/**
 * One page's precision and recall under {@link shingleCounts} ({@link shinglePrecision}, {@link shingleRecall}) and
 * their harmonic mean (0 when both are 0): what the page alone would score in shingleMetrics when it predicted
 * something.
 */
export function shingleScore(predicted: string, expected: string): TokenScore {
  const c = shingleCounts(predicted, expected);
  const precision = shinglePrecision(c);
  const recall = shingleRecall(c);
  return { precision, recall, f1: precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0 };
}
