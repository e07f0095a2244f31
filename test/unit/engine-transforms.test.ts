/** The 13 transforms of SPEC.md, their argument syntax and their errors. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyTransforms, compileTransform, compileTransforms, parseNumber, splitArgs, TRANSFORM_NAMES, type FieldValue } from '../../lambdas/engine/transforms.ts';

const t = (spec: string, v: FieldValue) => compileTransform(spec)(v);

describe('transforms', () => {
  it('knows exactly the 13 transforms of SPEC.md', () => {
    assert.deepEqual([...TRANSFORM_NAMES].sort(), ['extract_number', 'lowercase', 'regex', 'replace', 'slice', 'split', 'strip', 'strip_currency', 'strip_html', 'template', 'to_number', 'trim_whitespace', 'uppercase']);
  });

  it('strip, lowercase, uppercase, trim_whitespace', () => {
    assert.equal(t('strip', '  \n a  b \t'), 'a  b');
    assert.equal(t('lowercase', 'In Stock ÄÖ'), 'in stock äö');
    assert.equal(t('uppercase', 'straße'), 'STRASSE');
    assert.equal(t('trim_whitespace', '  a \n\t  b   c '), 'a b c');
  });

  it('strip_currency removes pound, dollar, euro, yen and lira signs', () => {
    for (const [input, out] of [['£51.77', '51.77'], ['$1,299.00', '1,299.00'], ['€ 12,50', '12,50'], ['¥1200', '1200'], ['₺49,90', '49,90'], ['US$ 5', '5'], ['12.00 TL', '12.00'], ['Â£51.77', 'Â51.77']] as const) {
      assert.equal(t('strip_currency', input), out, input);
    }
    assert.equal(t('strip_currency', 'TLC box'), 'TLC box', 'letters that are not a lira sign stay');
  });

  it('to_number reads the ways people write numbers, else null', () => {
    const cases: Array<[string, number | null]> = [
      ['51.77', 51.77], ['1,234.56', 1234.56], ['1.234,56', 1234.56], ['1,000', 1000], ['2.500.000', 2500000],
      ['12,5', 12.5], [' 42 ', 42], ['-3.5', -3.5], ['1 234', 1234], ['1e3', 1000], ['abc', null], ['', null], ['12abc', null],
    ];
    for (const [input, out] of cases) assert.equal(t('to_number', input), out, input);
    assert.equal(t('to_number', 7), 7);
    assert.equal(t('to_number', null), null);
    assert.equal(applyTransforms('£1,299.99', compileTransforms(['strip_currency', 'to_number'])), 1299.99);
  });

  it('extract_number takes the first number in a text', () => {
    assert.equal(t('extract_number', 'In stock (22 available)'), 22);
    assert.equal(t('extract_number', 'Rated 4.5 of 5'), 4.5);
    assert.equal(t('extract_number', 'Price: 1,234.50 EUR, was 1,500'), 1234.5);
    assert.equal(t('extract_number', 'no digits'), null);
    assert.equal(t('extract_number', '-12 °C'), -12);
  });

  it('strip_html removes tags, script and style and decodes entities', () => {
    assert.equal(t('strip_html', '<p>A <b>bold</b> &amp; <i>brave</i>&nbsp;move&#33; &#x263A;</p><script>x()</script><style>p{}</style>'), 'A bold & brave\u00a0move! ☺');
  });

  it('regex: the first group, else the whole match, else null', () => {
    assert.equal(t('regex:(\\d+) reviews', '12 reviews'), '12');
    assert.equal(t('regex:\\d+', 'page 7 of 9'), '7');
    assert.equal(t('regex:(x)?(\\d)', 'a5'), '5', 'the first group that took part');
    assert.equal(t('regex:zzz', 'abc'), null);
    assert.equal(t('regex:a:b', 'xa:by'), 'a:b', 'colons after the first belong to the pattern');
  });

  it('replace:OLD:NEW with an empty NEW and an escaped colon', () => {
    assert.equal(t('replace:star-rating:', 'star-rating Three'), ' Three');
    assert.equal(t('replace:a:b', 'banana'), 'bbnbnb');
    assert.equal(t('replace:\\::-', '10:30:00'), '10-30-00');
  });

  it('split:DELIM:INDEX with negative and out-of-range indexes', () => {
    assert.equal(t('split:,:1', 'a,b,c'), 'b');
    assert.equal(t('split:/:-1', 'https://x.test/a/b'), 'b');
    assert.equal(t('split:,:5', 'a,b'), null);
    assert.equal(t('split:::1', 'k:v'), 'v', 'a colon delimiter');
    assert.equal(t('split: - :0', 'Title - Site'), 'Title');
  });

  it('slice:START:END counts characters, END optional, negatives from the end', () => {
    assert.equal(t('slice:0:5', 'Hello world'), 'Hello');
    assert.equal(t('slice:6', 'Hello world'), 'world');
    assert.equal(t('slice:-5', 'Hello world'), 'world');
    assert.equal(t('slice:0:2', '😀😃😄'), '😀😃', 'code points, not UTF-16 units');
  });

  it('template:TEXT{value}TEXT', () => {
    assert.equal(t('template:https://example.com{value}?ref=1', '/a'), 'https://example.com/a?ref=1');
    assert.equal(t('template:{value}-{value}', 'x'), 'x-x');
  });

  it('applies in order, turns numbers into text for text transforms, lets null through', () => {
    assert.equal(applyTransforms('  PRICE: £3  ', compileTransforms(['strip', 'lowercase', 'regex:(\\d+)', 'to_number'])), 3);
    assert.equal(applyTransforms(12, compileTransforms(['template:#{value}'])), '#12');
    assert.equal(applyTransforms(null, compileTransforms(['strip', 'uppercase', 'template:x{value}'])), null);
  });

  it('refuses unknown transforms and bad arguments with a clear message and the index', () => {
    assert.throws(() => compileTransform('titlecase'), /unknown transform "titlecase"; known: strip/);
    assert.throws(() => compileTransform('regex:('), /invalid regular expression/);
    assert.throws(() => compileTransform('regex'), /regex needs a pattern/);
    assert.throws(() => compileTransform('replace:onlyone'), /replace needs OLD and NEW/);
    assert.throws(() => compileTransform('split:,:x'), /INDEX must be an integer/);
    assert.throws(() => compileTransform('slice:a:b'), /START must be an integer/);
    assert.throws(() => compileTransform('template:no placeholder'), /needs \{value\}/);
    assert.throws(() => compileTransform('strip:x'), /takes no arguments/);
    assert.throws(() => compileTransforms(['strip', 'nope']), (err: Error & { index?: number }) => err.index === 1);
  });

  it('parseNumber and splitArgs helpers', () => {
    assert.equal(parseNumber("1'234'567"), 1234567);
    assert.deepEqual(splitArgs('a:b\\:c:d'), ['a', 'b:c', 'd']);
  });
});
