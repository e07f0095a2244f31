/**
 * The 13 transforms of the config language (docs/spec.md; docs/config-language.md, "Transforms") (lambdas/engine/transforms.ts): what each one does,
 * their argument syntax (`:` separates, `\:` is a literal colon), the order they apply in, and the
 * errors a bad transform string gives when a config is compiled.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyTransforms,
  compilePattern,
  compileTransform,
  compileTransforms,
  regexExtract,
  REGEX_LIMITS,
  TransformError,
  TRANSFORM_NAMES,
  type FieldValue,
} from '../../lambdas/engine/transforms.ts';
import { bookshopPage } from '../fixtures/site/books.ts';

/** Compiles one transform string and applies it. */
const t = (spec: string, value: FieldValue): FieldValue => compileTransform(spec)(value);
/** Compiles a list and applies it in order. */
const chain = (specs: string[], value: FieldValue): FieldValue => applyTransforms(value, compileTransforms(specs));

/** The error a transform string gives when compiled (fails the test when it compiles). */
function compileError(spec: string): TransformError {
  try {
    compileTransform(spec);
  } catch (err) {
    assert.ok(err instanceof TransformError, `${spec}: expected a TransformError, got ${String(err)}`);
    return err;
  }
  assert.fail(`"${spec}" compiled but should have been refused`);
}

describe('transform names', () => {
  it('are exactly the 13 of docs/spec.md', () => {
    const spec = ['strip', 'lowercase', 'uppercase', 'strip_currency', 'to_number', 'extract_number', 'strip_html',
      'trim_whitespace', 'regex', 'replace', 'split', 'slice', 'template'];
    assert.deepEqual([...TRANSFORM_NAMES].sort(), [...spec].sort());
  });
});

describe('text transforms', () => {
  it('strip trims both ends but keeps inner whitespace', () => {
    assert.equal(t('strip', ' \n\t A Light  in the Attic \r\n'), 'A Light  in the Attic');
    assert.equal(t('strip', 'nothing to trim'), 'nothing to trim');
  });

  it('lowercase and uppercase change case, also outside ASCII', () => {
    assert.equal(t('lowercase', 'In Stock ÉÇ'), 'in stock éç');
    assert.equal(t('uppercase', 'star-rating Three'), 'STAR-RATING THREE');
    assert.equal(t('uppercase', 'größe'), 'GRÖSSE');
  });

  it('trim_whitespace collapses every run of whitespace (newlines, tabs, no-break spaces) and trims', () => {
    assert.equal(t('trim_whitespace', '\n   In stock\n\n   (22 available)\t '), 'In stock (22 available)');
    assert.equal(t('trim_whitespace', 'a\u00a0\u00a0b'), 'a b');
  });

  it('strip_html removes tags, comments and script/style content, and decodes entities', () => {
    assert.equal(t('strip_html', '<p>Hello <b>big</b> <a href="/x">world</a></p>'), 'Hello big world');
    assert.equal(t('strip_html', 'a<script>var x = "<b>";</script>b<style>p{}</style>c<!-- note -->d'), 'abcd');
    assert.equal(t('strip_html', 'Fish &amp; Chips &lt;3 &quot;q&quot; &#39;s&#39; &#x20AC;5 &#163;2'), 'Fish & Chips <3 "q" \'s\' €5 £2');
    assert.equal(t('strip_html', 'no tags at all'), 'no tags at all');
  });

  it('strip_html is linear: unclosed `<script`, `<!--` and `<` (each a search to the end for a regular expression)', () => {
    // The rules hold where nothing closes: an unclosed script or comment is a tag up to its `>`, an unclosed `<` stays.
    assert.equal(t('strip_html', 'a<script>b<style>c</style>d'), 'abd');
    assert.equal(t('strip_html', 'a<!-- b <i>c</i>'), 'ac');
    assert.equal(t('strip_html', 'a <i>b</i> < c'), 'a b < c');
    assert.equal(t('strip_html', '<SCRIPT >x</script >y<scripts>z'), 'yz');
    const hostile = `${'<script'.repeat(200_000)}${'<!--'.repeat(200_000)}${'<'.repeat(500_000)}`;
    const t0 = performance.now();
    t('strip_html', hostile);
    // Measured 25 ms (the regular expressions it replaced: 1.3 s for 50,000 `<` alone, growing with the square).
    assert.ok(performance.now() - t0 < 2000, `${(performance.now() - t0).toFixed(0)} ms`);
  });
});

describe('strip_currency', () => {
  it('removes the pound, dollar, euro, yen and lira signs, wherever they stand, and trims', () => {
    const cases: Array<[string, string]> = [
      ['£51.77', '51.77'],
      ['$1,234.00', '1,234.00'],
      ['€ 12,50', '12,50'],
      ['12,50 €', '12,50'],
      ['¥1200', '1200'],
      ['₺45,90', '45,90'],
      ['US$10', '10'],
    ];
    for (const [input, expected] of cases) assert.equal(t('strip_currency', input), expected, input);
  });

  it('leaves text without a currency sign alone, letters included', () => {
    assert.equal(t('strip_currency', 'In stock'), 'In stock');
    assert.equal(t('strip_currency', '42'), '42');
  });

  it('strips every price of the fixture books page to a plain decimal', () => {
    const html = bookshopPage('/books/')!;
    const prices = [...html.matchAll(/<p class="price_color">([^<]*)<\/p>/g)].map((m) => m[1]!);
    assert.equal(prices.length, 20);
    assert.ok(prices.includes('£10.00'));
    for (const price of prices) {
      assert.match(price, /^£\d+\.\d\d$/, 'the page writes prices as £NN.NN');
      assert.equal(t('strip_currency', price), price.slice(1));
    }
  });
});

describe('to_number', () => {
  it('parses decimal points, thousands separators of both conventions, signs and spaces', () => {
    const cases: Array<[string, number]> = [
      ['51.77', 51.77],
      ['1,234.56', 1234.56],
      ['1.234,56', 1234.56],
      ['1,234,567', 1234567],
      ['12,5', 12.5],
      ['1 234', 1234],
      ['  42  ', 42],
      ['-3.5', -3.5],
      ['0', 0],
    ];
    for (const [input, expected] of cases) assert.equal(t('to_number', input), expected, input);
  });

  it('gives null for text that is not a number, and for null or booleans', () => {
    for (const input of ['abc', '', '   ', '£5', '12 apples', '1,2,3', 'Infinity', '0x10']) {
      assert.equal(t('to_number', input), null, JSON.stringify(input));
    }
    assert.equal(t('to_number', null), null);
    assert.equal(t('to_number', true), null);
  });

  it('keeps a number as it is', () => {
    assert.equal(t('to_number', 7.25), 7.25);
  });
});

describe('extract_number', () => {
  it('takes the first number inside a text', () => {
    assert.equal(t('extract_number', 'In stock (22 available)'), 22);
    assert.equal(t('extract_number', 'Price: £1,234.56 incl. tax'), 1234.56);
    assert.equal(t('extract_number', 'rated 4.5 out of 5'), 4.5);
    assert.equal(t('extract_number', '-5 degrees, then 7'), -5);
    assert.equal(t('extract_number', 'Page 1 of 50'), 1);
    assert.equal(t('extract_number', 'ends with a dot 3.'), 3);
  });

  it('takes the leading integer of a run that is not one number, rather than null', () => {
    assert.equal(t('extract_number', 'macOS v10.15.7'), 10);
    assert.equal(t('extract_number', 'sizes 8,10,12'), 8);
  });

  it('gives null without digits, keeps numbers, lets null through', () => {
    assert.equal(t('extract_number', 'no digits here'), null);
    assert.equal(t('extract_number', ''), null);
    assert.equal(t('extract_number', 12), 12);
    assert.equal(t('extract_number', null), null);
  });
});

describe('numbers: one parser behind to_number and extract_number (docs/config-language.md, "Numbers")', () => {
  // [text, to_number (the whole text is one number), extract_number (the first number in the text)]
  const cases: Array<[string, number | null, number | null]> = [
    ['$.50', null, 0.5],
    ['.5', 0.5, 0.5],
    ['1 234,50', 1234.5, 1234.5],
    ['1e3', 1000, 1000],
    ['2.5E-2', 0.025, 0.025],
    ['-1,234.56', -1234.56, -1234.56],
    ['1.234,56', 1234.56, 1234.56],
    ['1,500', 1500, 1500],
    ['1.500', 1.5, 1.5],
    ['0,500', 0.5, 0.5],
    ['2.500.000', 2500000, 2500000],
    ['1,23,456.78', 123456.78, 123456.78],
    ['1\u2009234,50', 1234.5, 1234.5],
    ['1\u202f234', 1234, 1234],
    ['1\u00a0234\u00a0567', 1234567, 1234567],
    ["1'234.50", 1234.5, 1234.5],
    ['1\u2019000', 1000, 1000],
    ['\u22127', -7, -7],
    ['+3', 3, 3],
    ['v2.0.1', null, 2],
    ['12.03.2024', null, 12],
    ['abc', null, null],
    ['1e999', null, null],
  ];
  for (const [text, whole, first] of cases) {
    it(`${JSON.stringify(text)}: to_number ${whole}, extract_number ${first}`, () => {
      assert.equal(t('to_number', text), whole);
      assert.equal(t('extract_number', text), first);
    });
  }

  it('finds the number inside a text by the same rules', () => {
    assert.equal(t('extract_number', 'from $.50 each'), 0.5);
    assert.equal(t('extract_number', 'Total : 1 234,50 €'), 1234.5);
    assert.equal(t('extract_number', 'about 1e3 hits'), 1000);
    assert.equal(t('extract_number', 'Prix\u202f: 12\u202f500,00\u00a0€'), 12500);
    assert.equal(chain(['strip_currency', 'to_number'], '$.50'), 0.5);
  });

  it('a space or apostrophe groups only three digits, so counts side by side stay apart', () => {
    assert.equal(t('extract_number', 'sizes 8 10 12'), 8);
    assert.equal(t('extract_number', "he is 5'10\""), 5);
    assert.equal(t('to_number', '1 2'), null);
  });

  it('a sign glued to a word is not a minus', () => {
    assert.equal(t('extract_number', 'SKU-123'), 123);
    assert.equal(t('extract_number', 'pages 5-10'), 5);
    assert.equal(t('extract_number', 'change: -4.5%'), -4.5);
  });

  it('property: for any bare number, extract_number equals to_number, alone or inside a text', () => {
    // A seeded generator (mulberry32), so a failure reproduces.
    let seed = 0x5eed;
    const rand = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const digits = (n: number) => Array.from({ length: n }, () => String(Math.floor(rand() * 10))).join('');
    const GROUPS = ['', ',', '.', ' ', '\u00a0', '\u202f', '\u2009', "'"] as const;
    let checkedValues = 0;
    for (let i = 0; i < 3000; i++) {
      const intPart = String(Number(digits(1 + Math.floor(rand() * 10))));
      const group = pick(GROUPS);
      const decimal = pick(['.', ','].filter((d) => d !== group));
      const fraction = rand() < 0.5 ? digits(1 + Math.floor(rand() * 4)) : '';
      const sign = pick(['', '', '-', '+']);
      const exponent = !group && rand() < 0.2 ? `e${pick(['', '-', '+'])}${Math.floor(rand() * 20)}` : '';
      const grouped = group ? intPart.replace(/\B(?=(\d{3})+$)/g, group) : intPart;
      const text = `${sign}${grouped}${fraction ? decimal + fraction : ''}${exponent}`;

      const whole = t('to_number', text);
      assert.notEqual(whole, null, `${JSON.stringify(text)} is a number`);
      assert.equal(t('extract_number', text), whole, JSON.stringify(text));
      assert.equal(t('extract_number', `about ${text} items`), whole, `inside a text: ${JSON.stringify(text)}`);

      // Where the writing is unambiguous, the value is the one written. The two ambiguous forms are a
      // single "." group of three without decimals ("1.500") and a decimal comma followed by exactly
      // three digits after at most three ("1,500"): docs/config-language.md decides those.
      const groups = grouped === intPart ? 1 : grouped.split(group).length;
      const ambiguous = (!fraction && group === '.' && groups === 2)
        || (!group || groups === 1) && decimal === ',' && fraction.length === 3 && /^[1-9]\d{0,2}$/.test(intPart);
      if (!ambiguous) {
        const written = Number(`${sign === '-' ? '-' : ''}${intPart}${fraction ? `.${fraction}` : ''}${exponent}`);
        assert.equal(whole, written, JSON.stringify(text));
        checkedValues++;
      }
    }
    assert.ok(checkedValues > 2000, `values checked: ${checkedValues}`);
  });
});

describe('regex:PATTERN', () => {
  it('with a group gives the first group', () => {
    assert.equal(t('regex:\\((\\d+) available\\)', 'In stock (22 available)'), '22');
    assert.equal(t('regex:star-rating (\\w+)', 'star-rating Three'), 'Three');
  });

  it('without a group gives the whole match', () => {
    assert.equal(t('regex:\\d+\\.\\d+', 'costs 51.77 today'), '51.77');
  });

  it('with alternative groups gives the group that took part', () => {
    assert.equal(t('regex:(x+)|(y+)', 'zzyyy'), 'yyy');
  });

  it('gives null when nothing matches', () => {
    assert.equal(t('regex:(\\d+)', 'no digits'), null);
  });

  it('keeps colons inside the pattern', () => {
    assert.equal(t('regex:UPC: (\\w+)', 'UPC: a897fe39b1053632'), 'a897fe39b1053632');
  });
});

describe('regular expressions run on RE2: linear time, JavaScript reading of the common syntax (issue 24)', () => {
  /** What the same pattern gives with JavaScript's RegExp (the engine before RE2), as regexExtract reads a match. */
  const js = (pattern: string, text: string): string | null => {
    const m = new RegExp(pattern, 'u').exec(text);
    if (!m) return null;
    if (m.length > 1) return m.slice(1).find((g) => g !== undefined) ?? null;
    return m[0];
  };

  it('`^(a+)+$` on 40 a and a `!` (103 s of backtracking before) answers at once; so do the other classic blow-ups', () => {
    for (const [spec, text] of [
      ['regex:^(a+)+$', `${'a'.repeat(40)}!`],
      ['regex:(a|aa)*b', 'a'.repeat(100_000)],
      ['regex:^(\\w+\\s?)*$', `${'word '.repeat(20_000)}!`],
      ['regex:(x+x+)+y', 'x'.repeat(50_000)],
    ] as const) {
      const t0 = performance.now();
      assert.equal(t(spec, text), null, spec);
      // Measured: under 20 ms each on the 2-core machine; the bound leaves room for a loaded one.
      assert.ok(performance.now() - t0 < 2000, `${spec}: ${(performance.now() - t0).toFixed(0)} ms`);
    }
  });

  it('the patterns the generator writes (labels cut from a value) extract as they did with JavaScript RegExp', () => {
    const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    const patterns: string[] = [];
    for (const label of ['Author', 'Published', 'Rated', 'Salary Search', 'Price ($)', 'Q', 'by']) {
      patterns.push(`^\\s*${escapeRegex(label)}\\s*:\\s*([\\s\\S]*)$`, `^([\\s\\S]*?)\\s*${escapeRegex(label)}:`, `${escapeRegex(label)}:\\s*([\\s\\S]*)$`);
    }
    patterns.push('^(.*) Author: ', ' Author: (.*)$', '(\\d+)', '\\((\\d+) available\\)', 'star-rating (\\w+)', '£\\d+\\.(\\d\\d)', '(\\d+)\\.', '(\\w+)');
    const texts = [
      '“The world as we have created it is a process of our thinking.” Author: Albert Einstein',
      '  Author:\u00a0Jane\u00a0Doe ', 'Published : 2024-03-05\nUpdated: 2024-03-06', 'Rated:\u3000Four stars', 'Salary Search:\t$80,000\r\n',
      'Price ($): 12.50', 'Q: why?', 'by: someone', 'In stock (22 available)', 'star-rating Three', '£51.77', 'no label here', '',
      'line one\nAuthor: two\nthree', 'a\u2028Author: b', 'Author:', '1.5 or 22',
    ];
    let compared = 0;
    for (const pattern of patterns) {
      const re = compilePattern(pattern);
      for (const text of texts) {
        assert.equal(regexExtract(re, text), js(pattern, text), `/${pattern}/ on ${JSON.stringify(text)}`);
        assert.equal(t(`regex:${pattern}`, text), js(pattern, text));
        compared++;
      }
    }
    assert.ok(compared > 450, `${compared}`);
  });

  it('reads JavaScript syntax as JavaScript does: \\s and \\S (Unicode spaces), `.`, \\u escapes, [^] and [], named groups', () => {
    assert.equal(t('regex:a\\sb', 'a\u00a0b'), 'a\u00a0b'); // RE2's own \s is ASCII only
    assert.equal(t('regex:a\\sb', 'a\u3000b'), 'a\u3000b');
    assert.equal(t('regex:(\\S+)', '\u00a0\u2003word\u00a0'), 'word');
    assert.equal(t('regex:a.c', 'a\rc a\nc a\u2028c abc'), 'abc'); // `.` is no line terminator
    assert.equal(t('regex:(?s)a.c', 'a\nc'), 'a\nc');
    assert.equal(t('regex:\\u00a3(\\d+)', '£5'), '5');
    assert.equal(t('regex:\\u{1F600}+', 'ok 😀😀'), '😀😀');
    assert.equal(t('regex:x[^]y', 'x\ny'), 'x\ny');
    assert.equal(t('regex:x[]y', 'xy'), null);
    assert.equal(t('regex:[[]', 'a[b'), '[');
    assert.equal(t('regex:(?<year>\\d{4})-\\d\\d', 'on 2024-03'), '2024');
    assert.equal(t('regex:\\/(\\w+)$', 'a/b/page'), 'page');
    assert.equal(t('regex:\\bcat\\b', 'concat cat'), 'cat');
    assert.equal(t('regex:(?i)UPC: (\\w+)', 'upc: a897'), 'a897'); // RE2's inline flags (JavaScript has none)
    assert.equal(t('regex:\\p{Lu}+', 'école ÉCOLE'), 'ÉCOLE');
  });

  it('refuses what RE2 cannot run: backreferences, lookahead, lookbehind, octal escapes, too large a program', () => {
    for (const [spec, reason] of [
      ['regex:(a)\\1', /backreferences \(\\1\) are not supported \(RE2 syntax/],
      ['regex:(?<q>["\'])x\\k<q>', /backreferences \(\\k<name>\) are not supported/],
      ['regex:a(?=b)', /lookahead/],
      ['regex:a(?!b)', /lookahead/],
      ['regex:(?<=\\$)\\d+', /lookbehind/],
      ['regex:(?<!-)\\d+', /lookbehind/],
      ['regex:\\01', /octal escapes/],
      ['regex:a{2,1001}', /invalid repeat count/],
      ['regex:\\e', /invalid escape sequence/],
      [`regex:${'(?:abc|def)'.repeat(400)}`, /is too large: \d+ RE2 instructions, at most 2000/],
    ] as const) {
      const err = compileError(spec);
      assert.match(err.message, /invalid regular expression|is too large/, spec);
      assert.match(err.message, reason, spec);
    }
    assert.match(compileError('regex:(').message, /^regex:\(: invalid regular expression \/\(\/: missing closing \)/);
  });

  it('reads at most 1,000,000 characters of a value, and fewer for a large pattern (characters × program size ≤ 50,000,000)', () => {
    assert.equal(REGEX_LIMITS.maxInputChars, 1_000_000);
    const small = compilePattern('(x)$');
    assert.equal(small.maxInput, 1_000_000);
    assert.equal(regexExtract(small, `${'a'.repeat(999_999)}x`), 'x');
    assert.equal(regexExtract(small, `${'a'.repeat(1_000_000)}x`), null); // the x is past what the pattern reads
    const large = compilePattern('[\\s\\S]{990}Q');
    assert.ok(large.maxInput < 60_000 && large.maxInput > 40_000, `${large.maxInput}`);
    const t0 = performance.now();
    assert.equal(regexExtract(large, `${'ab '.repeat(400_000)}Q`), null);
    // The slowest pattern measured on the longest text it reads: about 1 s quiet.
    assert.ok(performance.now() - t0 < 10_000, `${(performance.now() - t0).toFixed(0)} ms`);
  });
});

describe('replace:OLD:NEW', () => {
  it('replaces every occurrence', () => {
    assert.equal(t('replace:a:o', 'banana'), 'bonono');
  });

  it('with an empty NEW deletes', () => {
    assert.equal(t('replace:star-rating :', 'star-rating Four'), 'Four');
  });

  it('takes \\: as a literal colon in OLD and in NEW', () => {
    assert.equal(t('replace:\\::-', '10:30:00'), '10-30-00');
    assert.equal(t('replace:h:\\:', '10h30'), '10:30');
    assert.equal(t('replace:a\\:b:c\\:d', 'xa:by'), 'xc:dy');
  });

  it('treats OLD literally, not as a regex', () => {
    assert.equal(t('replace:.:,', '1.5.2'), '1,5,2');
  });
});

describe('split:DELIM:INDEX', () => {
  it('takes the item at INDEX, 0-based', () => {
    assert.equal(t('split:,:0', 'a,b,c'), 'a');
    assert.equal(t('split:,:2', 'a,b,c'), 'c');
    assert.equal(t('split: - :1', 'Title - Author'), 'Author');
  });

  it('counts a negative INDEX from the end', () => {
    assert.equal(t('split:/:-1', 'https://books.toscrape.com/catalogue/page-2.html'), 'page-2.html');
    assert.equal(t('split:/:-2', 'a/b/c'), 'b');
  });

  it('gives null for an INDEX out of range on either side', () => {
    assert.equal(t('split:,:3', 'a,b,c'), null);
    assert.equal(t('split:,:-4', 'a,b,c'), null);
  });

  it('may split on a colon, written bare or as \\:', () => {
    assert.equal(t('split:::1', 'key:value'), 'value');
    assert.equal(t('split:\\::1', 'key:value'), 'value');
  });
});

describe('slice:START:END', () => {
  it('takes characters START to END, END optional, negatives from the end', () => {
    assert.equal(t('slice:0:3', 'abcdef'), 'abc');
    assert.equal(t('slice:2', 'abcdef'), 'cdef');
    assert.equal(t('slice:-2', 'abcdef'), 'ef');
    assert.equal(t('slice:1:-1', 'abcdef'), 'bcde');
    assert.equal(t('slice:10:20', 'abc'), '');
  });

  it('counts characters, not UTF-16 units', () => {
    assert.equal(t('slice:0:2', '日本語'), '日本');
    assert.equal(t('slice:1:2', 'a😀b'), '😀');
  });
});

describe('template:TEXT{value}TEXT', () => {
  it('puts the value in place of {value}, every time it appears', () => {
    assert.equal(t('template:https://books.toscrape.com/{value}', 'catalogue/page-2.html'), 'https://books.toscrape.com/catalogue/page-2.html');
    assert.equal(t('template:Price: {value} GBP', '51.77'), 'Price: 51.77 GBP');
    assert.equal(t('template:{value}-{value}', 'x'), 'x-x');
  });

  it('reads \\: as a literal colon, as in every transform argument', () => {
    assert.equal(t('template:UPC\\: {value}', 'abc'), 'UPC: abc');
  });

  it('turns a number into text', () => {
    assert.equal(t('template:#{value}', 3), '#3');
  });
});

describe('value rules and order', () => {
  it('string transforms turn numbers and booleans into text and let null through', () => {
    assert.equal(t('uppercase', 12), '12');
    assert.equal(t('template:{value}!', false), 'false!');
    for (const spec of ['strip', 'lowercase', 'strip_currency', 'strip_html', 'trim_whitespace', 'regex:a', 'replace:a:b', 'split:,:0', 'slice:0:1', 'template:<{value}>']) {
      assert.equal(t(spec, null), null, spec);
    }
  });

  it('apply in the order given: each takes the previous one output', () => {
    assert.equal(chain(['strip_currency', 'to_number'], ' £1,299.99 '), 1299.99);
    // The other way round to_number sees the sign and gives null; strip_currency lets null through.
    assert.equal(chain(['to_number', 'strip_currency'], '£1,299.99'), null);
    assert.equal(chain(['replace:star-rating:', 'strip', 'lowercase'], 'star-rating Five'), 'five');
    assert.equal(chain(['lowercase', 'replace:star-rating:', 'strip'], 'star-rating Five'), 'five');
    assert.equal(chain(['strip', 'split: :0', 'uppercase'], '  a b  '), 'A');
    assert.equal(chain(['split: :0', 'strip', 'uppercase'], '  a b  '), '');
    assert.equal(chain(['extract_number', 'template:{value} items'], 'In stock (22 available)'), '22 items');
  });

  it('an empty list changes nothing', () => {
    assert.equal(chain([], 'as is '), 'as is ');
    assert.deepEqual(compileTransforms(undefined), []);
  });
});

describe('bad transforms are refused when compiled', () => {
  it('an unknown name names itself and lists the known ones', () => {
    const err = compileError('to_int');
    assert.match(err.message, /unknown transform "to_int"/);
    assert.match(err.message, /strip_currency/);
  });

  it('arguments to a transform that takes none', () => {
    assert.match(compileError('strip:x').message, /"strip" takes no arguments/);
    assert.match(compileError('to_number:2').message, /takes no arguments/);
  });

  it('regex without a pattern or with an invalid one', () => {
    assert.match(compileError('regex').message, /needs a pattern/);
    assert.match(compileError('regex:').message, /needs a pattern/);
    assert.match(compileError('regex:(\\d+').message, /invalid regular expression/);
  });

  it('replace without NEW, or with an empty OLD', () => {
    assert.match(compileError('replace:a').message, /replace needs OLD and NEW/);
    assert.match(compileError('replace::x').message, /replace needs OLD and NEW/);
    assert.match(compileError('replace:a:b:c').message, /replace needs OLD and NEW/);
  });

  it('split without an INDEX or with one that is not an integer', () => {
    assert.match(compileError('split:,').message, /split needs DELIM and INDEX/);
    assert.match(compileError('split:,:first').message, /INDEX must be an integer, got "first"/);
    assert.match(compileError('split:,:1.5').message, /INDEX must be an integer/);
  });

  it('slice without START, with a non-integer, or with three numbers', () => {
    assert.match(compileError('slice').message, /slice needs START\[:END\]/);
    assert.match(compileError('slice:a:3').message, /START must be an integer, got "a"/);
    assert.match(compileError('slice:0:b').message, /END must be an integer, got "b"/);
    assert.match(compileError('slice:1:2:3').message, /slice needs START\[:END\]/);
  });

  it('template without {value}', () => {
    assert.match(compileError('template:no placeholder').message, /template needs \{value\}/);
    assert.match(compileError('template').message, /template needs \{value\}/);
  });

  it('compileTransforms says which transform of the list is bad', () => {
    try {
      compileTransforms(['strip', 'to_number', 'split:,:x', 'nope']);
      assert.fail('should have thrown');
    } catch (err) {
      assert.ok(err instanceof TransformError);
      assert.equal((err as TransformError & { index?: number }).index, 2);
      assert.match(err.message, /split:,:x/);
    }
  });
});
