/**
 * The lead-generation tool (lambdas/tools/leads.ts, docs/tools.md "Lead generation") on small inline pages, one
 * rule each: every spelled-out email form, Cloudflare's XOR encoding (encoded here from its description, not by
 * the code under test), junk addresses, share links that are not profiles, phone forms and the country national
 * numbers are read in, de-duplication with sources, following contact pages through a fake PageFetch (same site,
 * the page cap, a failing page skipped), and bad input (empty, not HTML, broken markup, 5 MB). The report of each
 * case is also checked against leadsReportSchema with ajv in strict mode. The labelled real pages are in the
 * bench (`npm run bench -- leads`).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import {
  contactPageLinks, decodeCloudflareEmail, extractLeads, findLeads, leadsReportSchema, socialProfile, MAX_CONTACT_PAGES, type LeadsReport,
} from '../../lambdas/tools/leads/index.ts';
import type { FetchedText, PageFetch } from '../../lambdas/tools/page.ts';
import { toolPage } from '../helpers/tool-page.ts';

const validate = new Ajv({ strict: true, allErrors: true }).compile(leadsReportSchema);

/** extractLeads on `body` in a minimal page at `url`, the report checked against the schema. */
function leads(body: string, url = 'https://www.example-company.com/contact', head = '', lang = 'en'): LeadsReport {
  const r = extractLeads(toolPage(`<!DOCTYPE html><html lang="${lang}"><head><title>t</title>${head}</head><body>${body}</body></html>`, url));
  assert.ok(validate(r), JSON.stringify(validate.errors));
  return r;
}
const emails = (r: LeadsReport): string[] => r.emails.map((e) => e.email).sort();
const phones = (r: LeadsReport): string[] => r.phones.map((p) => p.e164).sort();
const profiles = (r: LeadsReport): string[] => r.social.map((s) => `${s.network}:${s.handle}`).sort();

/** Cloudflare's email obfuscation, written from its description: a key byte, then every byte of the address XOR the key, in hex. */
function cloudflareEncode(email: string, key: number): string {
  const hex = (n: number): string => n.toString(16).padStart(2, '0');
  return hex(key) + [...Buffer.from(email, 'utf8')].map((b) => hex(b ^ key)).join('');
}

describe('leads: emails', () => {
  it('reads mailto links without the query, percent-decoded, with the domain lower-cased', () => {
    const r = leads('<a href="mailto:Jane.Roe%40Example-Company.COM?subject=Hello%20there&body=x">write</a> <a href="MAILTO:sales@example-company.com">s</a>');
    assert.deepEqual(emails(r), ['Jane.Roe@example-company.com', 'sales@example-company.com']);
    assert.deepEqual(r.emails[0]!.sources, [{ type: 'mailto', page: 'https://www.example-company.com/contact' }]);
  });

  it('reads each spelled-out form and marks it obfuscated', () => {
    const cases: [string, string][] = [
      ['jsmith [at] stanford [dot] edu', 'jsmith@stanford.edu'],
      ['jdoe at harvard dot edu', 'jdoe@harvard.edu'],
      ['info(at)firma.de', 'info@firma.de'],
      ['kontakt (at) firma (punkt) de', 'kontakt@firma.de'],
      ['service {at} maison [point] fr', 'service@maison.fr'],
      ['citas (arroba) clinica (punto) es', 'citas@clinica.es'],
      ['press @ company.org', 'press@company.org'],
    ];
    for (const [written, address] of cases) {
      const r = leads(`<p>Write to ${written} today.</p>`);
      assert.deepEqual(emails(r), [address], written);
      assert.equal(r.emails[0]!.sources[0]!.type, 'obfuscated', written);
    }
  });

  it('reads addresses written with HTML entities as text', () => {
    const r = leads('<p>office&#64;dental-care.com and billing&#x40;dental-care.com</p>');
    assert.deepEqual(emails(r), ['billing@dental-care.com', 'office@dental-care.com']);
  });

  it('does not take "read more at Site.com" for an address: a bare " at " needs a spelled-out dot', () => {
    assert.deepEqual(emails(leads('<p>Read more at QuantaMagazine.org. Meet us at booth 12.</p>')), []);
  });

  it('decodes Cloudflare email protection in links and data-cfemail, with any key', () => {
    const a = cloudflareEncode('sales@northwind.com', 0x5a);
    const b = cloudflareEncode('support@northwind.com', 0xc3);
    const r = leads(
      `<a href="/cdn-cgi/l/email-protection#${a}">[email&#160;protected]</a>` +
        `<span class="__cf_email__" data-cfemail="${b}">[email&#160;protected]</span>`,
    );
    assert.deepEqual(emails(r), ['sales@northwind.com', 'support@northwind.com']);
    assert.ok(r.emails.every((e) => e.sources[0]!.type === 'cloudflare'));
    assert.equal(decodeCloudflareEmail(cloudflareEncode('ü@x.de', 7)), 'ü@x.de');
    assert.equal(decodeCloudflareEmail('zz'), null);
  });

  it('reads JSON-LD email, also as a mailto: URL, and inside CDATA', () => {
    const r = leads(
      '<script type="application/ld+json">//<![CDATA[\n{"@type":"Organization","email":"mailto:info@acme-ltd.com","contactPoint":{"email":["help@acme-ltd.com"]}}\n//]]></script>',
    );
    assert.deepEqual(emails(r), ['help@acme-ltd.com', 'info@acme-ltd.com']);
    assert.equal(r.emails[0]!.sources[0]!.type, 'json-ld');
  });

  it('leaves out junk: image names, placeholders, DSNs, hashes, scripts, styles, comments and attributes', () => {
    const r = leads(
      `<img src="/img/logo@2x.png"><p>sprite@3x.jpg icon@2x.webp</p>
       <p>e.g. example@example.com, name@domain.com, your@email.com or you@yourcompany.com</p>
       <p>key 605a7baede844d278b89dc95ae0a9123@sentry-next.wixpress.com</p>
       <p>a1b2c3d4e5f6a7b8c9d0@errors.example-company.com</p>
       <script>Sentry.init({dsn:"https://abc@o1.ingest.sentry.io/1"}); var s = "ops@example-company.com";</script>
       <style>.x{background:url(a@2x.png)}</style>
       <!-- old: boss@example-company.com -->
       <input placeholder="hidden@example-company.com">
       <a href="mailto:/dev/null@example-company.com">not a mailbox</a>
       <a href="mailto:?subject=Look">share</a>
       <p>Real: team@example-company.com</p>`,
    );
    assert.deepEqual(emails(r), ['team@example-company.com']);
  });

  it('accepts TLDs of 2 to 24 letters only', () => {
    assert.deepEqual(emails(leads('<p>a@b.studio c@d.x e@f.abcdefghijklmnopqrstuvwxyz g@h.c0m</p>')), ['a@b.studio']);
  });

  it('de-duplicates case-insensitively and lists each way it was found', () => {
    const r = leads('<a href="mailto:Info@Shop.com?subject=a">Info@Shop.com</a> <a href="mailto:info@shop.com?subject=b">x</a>');
    assert.equal(r.emails.length, 1);
    assert.equal(r.emails[0]!.email, 'Info@shop.com');
    assert.deepEqual(r.emails[0]!.sources.map((s) => s.type).sort(), ['mailto', 'text']);
  });
});

describe('leads: phones', () => {
  it('reads the usual forms in text and tel: links, valid numbers only, de-duplicated by E.164', () => {
    const r = leads(
      `<p>Main (650) 723-4000 · fax 650.723.4001 · intl +1 650 723 4002</p>
       <p><a href="tel:+16507234000">Call</a> <span>+</span>1-650-723-4000</p>
       <p>London +44 (0)20 7946 0321</p>`,
      'https://www.stanwood.edu/contact',
    );
    assert.deepEqual(phones(r), ['+16507234000', '+16507234001', '+16507234002', '+442079460321']);
    const main = r.phones.find((p) => p.e164 === '+16507234000')!;
    assert.equal(main.country, 'US');
    assert.equal(main.national, '(650) 723-4000');
    assert.deepEqual(main.sources.map((s) => s.type).sort(), ['tel', 'text']);
  });

  it('does not read dates, times, prices, ZIP codes, ISBNs, DOIs, year ranges, VAT and company numbers as phones', () => {
    const r = leads(
      `<p>Updated 03/14/2024 10:30, 2017-02-06 and 08.04.2015 12:46</p>
       <p>Price $1,299.00 (was $1,499.00). ZIP 94305-4060. © 1996-2015. Pages 3548–3580.</p>
       <p>ISBN 978-0-7486-2529-1 · doi:10.1073/pnas.0801507105 · ISSN 2324-5913</p>
       <p>VAT no. GB 174 6621 38 · Company no. 08314275 · EIN 13-4187520 · SKU 4006381333931</p>
       <p>Order 2024-118-4471 · http://example-company.com/item-2596987 · ref HP.2015.26.449</p>`,
      'https://www.example-company.com/',
    );
    assert.deepEqual(phones(r), []);
  });

  it('reads JSON-LD telephone and faxNumber', () => {
    const r = leads('<script type="application/ld+json">{"@graph":[{"@type":"Restaurant","telephone":"+1 (212) 477-0391","faxNumber":["212-477-0392"]}]}</script>');
    assert.deepEqual(phones(r), ['+12124770391', '+12124770392']);
    assert.ok(r.phones.every((p) => p.sources[0]!.type === 'json-ld'));
  });

  it('guesses the country of national numbers in the documented order', () => {
    const uk = '<p>Call 020 7946 0321</p>';
    // <html lang="en-GB"> on a .com site.
    let r = leads(uk, 'https://www.hartley.com/', '', 'en-GB');
    assert.deepEqual(phones(r), ['+442079460321']);
    assert.deepEqual(r.default_country, { country: 'GB', from: 'html-lang' });
    // The ccTLD wins over the language region (en-US is many templates' default).
    r = leads(uk, 'https://www.hartley.co.uk/', '', 'en-US');
    assert.deepEqual(r.default_country, { country: 'GB', from: 'tld' });
    assert.deepEqual(phones(r), ['+442079460321']);
    // JSON-LD addressCountry wins over everything.
    r = leads('<p>Tel. 030 2847 1560</p>', 'https://www.firma.com/', '<script type="application/ld+json">{"address":{"addressCountry":"DE"}}</script>', 'en-US');
    assert.deepEqual(r.default_country, { country: 'DE', from: 'json-ld' });
    assert.deepEqual(phones(r), ['+493028471560']);
    // og:locale when the page has no better clue.
    r = leads('<p>Tél. 04 78 42 19 63</p>', 'https://www.traiteur.com/', '<meta property="og:locale" content="fr_FR">', 'fr');
    assert.deepEqual(r.default_country, { country: 'FR', from: 'og-locale' });
    assert.deepEqual(phones(r), ['+33478421963']);
    // .edu is US; English with no region falls back to US.
    assert.deepEqual(leads('<p>(650) 723-4344</p>', 'https://physics.stanwood.edu/').default_country, { country: 'US', from: 'tld' });
    assert.deepEqual(leads('<p>(650) 723-4344</p>', 'https://www.example-company.com/').default_country, { country: 'US', from: 'english' });
    // A country named in the text is the second guess: used where the first finds nothing.
    r = leads('<p>We are in Amsterdam, the Netherlands. Call 020 794 2213.</p>', 'https://pixelforge.io/');
    assert.deepEqual(phones(r), ['+31207942213']);
    // Japanese page: the language says JP; full-width digits are read.
    r = leads('<p>TEL：０６－６３４１－２２０８</p>', 'https://www.sakura.com/', '', 'ja');
    assert.deepEqual(phones(r), ['+81663412208']);
  });

  it('keeps one entry for a number written with different extensions', () => {
    const r = leads('<p>212.639.7410 ext. 201</p><p>212.639.7410 ext. 204</p>', 'https://www.harbor.org/');
    assert.deepEqual(phones(r), ['+12126397410']);
  });
});

describe('leads: social profiles', () => {
  it('reads profiles of every network and normalises them', () => {
    const r = leads(`
      <a href="https://www.linkedin.com/in/jane-doe-123/?trk=public_profile">in</a>
      <a href="https://uk.linkedin.com/company/acme-ltd">co</a>
      <a href="https://twitter.com/AcmeHQ?ref_src=twsrc%5Etfw">tw</a>
      <a href="http://twitter.com/#!/OldAcme">old</a>
      <a href="https://twitter.com/intent/follow?screen_name=acmefollow">follow</a>
      <a href="https://www.facebook.com/acme.ltd/">fb</a>
      <a href="https://www.facebook.com/pages/Acme-Shop/1488568504730671">page</a>
      <a href="https://www.instagram.com/acme.ltd/?hl=en">ig</a>
      <a href="https://www.youtube.com/@acme?sub_confirmation=1">yt</a>
      <a href="https://www.youtube.com/channel/UCdGdOeNEOxQEHLTP3CtC5_g/videos">ch</a>
      <a href="https://github.com/acme-ltd">gh</a>
      <a href="https://www.tiktok.com/@acme.ltd?lang=en">tt</a>
      <a href="https://www.pinterest.co.uk/acmeltd/">pin</a>
      <a href="https://www.threads.net/@acme.ltd">th</a>
      <a href="https://bsky.app/profile/acme.bsky.social">bs</a>
      <a href="https://t.me/acme_news">tg</a>
      <a href="https://wa.me/34622418907">wa</a>
      <a rel="me" href="https://social.example-company.com/@acme">fedi</a>
      <a href="https://mastodon.social/@acmeteam">mast</a>`);
    assert.deepEqual(profiles(r), [
      'bluesky:acme.bsky.social', 'facebook:1488568504730671', 'facebook:acme.ltd', 'github:acme-ltd', 'instagram:acme.ltd',
      'linkedin:company/acme-ltd', 'linkedin:in/jane-doe-123', 'mastodon:acme@social.example-company.com', 'mastodon:acmeteam@mastodon.social',
      'pinterest:acmeltd', 'telegram:acme_news', 'threads:acme.ltd', 'tiktok:acme.ltd', 'whatsapp:34622418907', 'x:AcmeHQ', 'x:OldAcme', 'x:acmefollow',
      'youtube:@acme', 'youtube:channel/UCdGdOeNEOxQEHLTP3CtC5_g',
    ]);
    const urls = r.social.map((s) => s.url);
    assert.ok(urls.includes('https://linkedin.com/in/jane-doe-123'));
    assert.ok(urls.includes('https://twitter.com/AcmeHQ'));
    assert.ok(urls.includes('https://instagram.com/acme.ltd'));
    assert.ok(urls.every((u) => u.startsWith('https://') && !u.endsWith('/') && !u.includes('?') && !u.includes('www.')), urls.join(' '));
  });

  it('leaves out share, intent, hashtag, post, video, tracking and widget URLs', () => {
    const r = leads(`
      <a href="https://www.facebook.com/sharer/sharer.php?u=x">1</a><a href="https://www.facebook.com/sharer.php?u=x">2</a>
      <a href="https://www.facebook.com/dialog/share?app_id=1">3</a><a href="https://www.facebook.com/plugins/like.php?href=x">4</a>
      <img src="https://www.facebook.com/tr?id=1&ev=PageView"><a href="https://www.facebook.com/acme/posts/123">5</a>
      <a href="https://www.facebook.com/groups/518955314959236/525242040997230/">6</a><a href="https://www.facebook.com/app_scoped_user_id/2335/">7</a>
      <a href="https://twitter.com/intent/tweet?url=x&via=acme">8</a><a href="https://twitter.com/share?url=x">9</a><a href="https://x.com/intent/post?text=x">10</a>
      <a href="https://twitter.com/hashtag/Hamilton?src=hash">11</a><a href="https://twitter.com/acme/status/1454931184966770696">12</a>
      <a href="https://www.linkedin.com/shareArticle?mini=true&url=x">13</a><a href="https://www.linkedin.com/sharing/share-offsite/?url=x">14</a>
      <a href="https://pinterest.com/pin/create/button/?url=x">15</a><a href="https://wa.me/?text=x">16</a><a href="https://api.whatsapp.com/send?text=x">17</a>
      <a href="https://t.me/share/url?url=x">18</a><a href="https://bsky.app/intent/compose?text=x">19</a><a href="https://www.threads.net/intent/post?text=x">20</a>
      <a href="https://www.youtube.com/watch?v=abc">21</a><iframe src="https://www.youtube.com/embed/abc"></iframe>
      <a href="https://github.com/acme/repo">22</a><a href="https://github.com/acme/repo/issues">23</a><a href="https://www.instagram.com/p/Cx1/">24</a>
      <a href="https://medium.com/@acme" rel="me">25</a><a href="https://bsky.app/profile/acme.bsky.social/post/3k">26</a>`);
    assert.deepEqual(profiles(r), []);
  });

  it('reads JSON-LD sameAs and Open Graph / Twitter card meta tags', () => {
    const r = leads(
      '',
      'https://www.example-company.com/',
      `<meta name="twitter:site" content="@acmehq"><meta name="twitter:creator" value="@writer_one"><meta name="twitter:site" content="ACME | BY JOE">
       <meta property="article:publisher" content="https://www.facebook.com/acme"><meta property="article:author" content="Jane Doe">
       <script type="application/ld+json">{"@type":"Organization","sameAs":["https://www.instagram.com/acme/","https://www.tiktok.com/@acme"]}</script>`,
    );
    assert.deepEqual(profiles(r), ['facebook:acme', 'instagram:acme', 'tiktok:acme', 'x:acmehq', 'x:writer_one']);
    assert.equal(r.social.find((s) => s.network === 'x' && s.handle === 'acmehq')!.sources[0]!.type, 'meta');
    assert.equal(r.social.find((s) => s.network === 'tiktok')!.sources[0]!.type, 'json-ld');
  });

  it('de-duplicates by network and handle, twitter.com and x.com alike, case-insensitively', () => {
    const r = leads('<a href="https://twitter.com/Acme">a</a><a href="https://x.com/acme/">b</a><a href="https://www.facebook.com/Acme">c</a><a href="https://facebook.com/acme">d</a>');
    assert.deepEqual(profiles(r), ['facebook:Acme', 'x:Acme']);
  });

  it('socialProfile() rejects what is not a URL of a reported network', () => {
    assert.equal(socialProfile('javascript:void(0)'), null);
    assert.equal(socialProfile('https://www.yelp.com/biz/acme'), null);
    assert.equal(socialProfile('https://plus.google.com/+Acme'), null);
    assert.equal(socialProfile('not a url'), null);
  });
});

describe('leads: bad input', () => {
  it('gives empty lists for an empty page, a non-HTML body and broken markup, and reads plain text as text', () => {
    const empty = extractLeads(toolPage('', 'https://www.example-company.com/'));
    assert.ok(validate(empty));
    assert.deepEqual([empty.emails, empty.phones, empty.social], [[], [], []]);
    const png = extractLeads(toolPage('\x89PNG\r\n\x1a\n info@acme-ltd.com', 'https://www.example-company.com/logo.png', { contentType: 'image/png' }));
    assert.deepEqual([png.emails, png.phones, png.social], [[], [], []]);
    const text = extractLeads(toolPage('Contact: info@acme-ltd.com, (650) 723-4000\n', 'https://www.example-company.com/humans.txt', { contentType: 'text/plain' }));
    assert.deepEqual([emails(text), phones(text)], [['info@acme-ltd.com'], ['+16507234000']]);
    const broken = extractLeads(toolPage('<div><p>Mail <a href="mailto:hi@acme-ltd.com">hi@acme-ltd.com<td></table></span></p', 'https://www.example-company.com/'));
    assert.deepEqual(emails(broken), ['hi@acme-ltd.com']);
    const badLd = extractLeads(toolPage('<script type="application/ld+json">{"email": "x@acme-ltd.com",,}</script><p>ok@acme-ltd.com</p>', 'https://www.example-company.com/'));
    assert.deepEqual(emails(badLd), ['ok@acme-ltd.com']);
  });

  it('reads a 5 MB page in reasonable time and finds what is at its end', () => {
    const filler = '<p>Lorem ipsum dolor sit amet, 2024-03-15 order 118-4471, consectetur adipiscing elit. Price $1,299.00.</p>\n';
    const html = `<html lang="en"><body>${filler.repeat(Math.ceil((5 * 1024 * 1024) / filler.length))}<footer>Call (650) 723-4000 or mail end@acme-ltd.com</footer></body></html>`;
    assert.ok(html.length >= 5 * 1024 * 1024);
    const t0 = performance.now();
    const r = extractLeads(toolPage(html, 'https://www.example-company.com/'));
    const ms = performance.now() - t0;
    assert.deepEqual([emails(r), phones(r)], [['end@acme-ltd.com'], ['+16507234000']]);
    assert.ok(ms < 20_000, `took ${Math.round(ms)} ms`);
  });
});

describe('leads: following contact pages', () => {
  const home = `<!DOCTYPE html><html lang="en"><body>
    <nav><a href="/contact-us/">Contact</a> <a href="https://www.acme-ltd.com/about">About us</a> <a href="/impressum">Impressum</a>
    <a href="/team">Our team</a> <a href="/kontakt">Kontakt</a> <a href="/contacto">Contacto</a> <a href="/staff">Staff</a>
    <a href="/products">Products</a> <a href="https://other-site.com/contact">Their contact</a> <a href="/contact-us/#form">Form</a>
    <a href="/files/contact.pdf">Contact sheet (PDF)</a> <a href="mailto:x@acme-ltd.com">Contact by mail</a></nav>
    <p>Home: <a href="mailto:info@acme-ltd.com">info@acme-ltd.com</a></p></body></html>`;
  const page = toolPage(home, 'https://acme-ltd.com/');

  it('picks same-site contact, imprint, about and team pages by words in several languages, best first, at most 5', () => {
    const links = contactPageLinks(page);
    assert.equal(links.length, MAX_CONTACT_PAGES);
    assert.deepEqual(links.slice(0, 3), ['https://acme-ltd.com/contact-us/', 'https://acme-ltd.com/kontakt', 'https://acme-ltd.com/contacto']);
    assert.deepEqual(links.slice(3), ['https://acme-ltd.com/impressum', 'https://www.acme-ltd.com/about']);
    assert.ok(!links.some((l) => l.includes('other-site') || l.endsWith('.pdf') || l.includes('products')));
  });

  it('merges the findings of the followed pages with their page in sources, and skips a page that fails', async () => {
    const fetched: string[] = [];
    const fetch: PageFetch = async (url) => {
      fetched.push(url);
      const html = (body: string): FetchedText => ({ url, status: 200, headers: {}, contentType: 'text/html', text: `<html lang="en"><body>${body}</body></html>` });
      if (url.endsWith('/contact-us/')) return html('<p>info@acme-ltd.com · (650) 723-4000 · <a href="https://www.linkedin.com/company/acme-ltd">in</a></p>');
      if (url.endsWith('/kontakt')) return null; // not fetched at all
      if (url.endsWith('/contacto')) return { url, status: 404, headers: {}, contentType: 'text/html', text: '<p>gone@acme-ltd.com</p>' };
      if (url.endsWith('/impressum')) return { url, status: 200, headers: {}, contentType: 'application/pdf', text: 'pdf@acme-ltd.com' };
      if (url.endsWith('/about')) throw new Error('connection reset');
      return html('<p>never@acme-ltd.com</p>');
    };
    const r = await findLeads(page, { followContactPages: true, fetch });
    assert.ok(validate(r), JSON.stringify(validate.errors));
    assert.equal(fetched.length, MAX_CONTACT_PAGES);
    assert.deepEqual(emails(r), ['info@acme-ltd.com', 'x@acme-ltd.com']);
    assert.deepEqual(r.emails.find((e) => e.email === 'info@acme-ltd.com')!.sources, [
      { type: 'mailto', page: 'https://acme-ltd.com/' },
      { type: 'text', page: 'https://acme-ltd.com/' },
      { type: 'text', page: 'https://acme-ltd.com/contact-us/' },
    ]);
    assert.deepEqual(phones(r), ['+16507234000']);
    assert.deepEqual(r.phones[0]!.sources, [{ type: 'text', page: 'https://acme-ltd.com/contact-us/' }]);
    assert.deepEqual(profiles(r), ['linkedin:company/acme-ltd']);
    assert.deepEqual(
      r.pages.map((p) => [p.url.replace('https://', ''), p.status, p.skipped ?? 'read']),
      [
        ['acme-ltd.com/', 200, 'read'],
        ['acme-ltd.com/contact-us/', 200, 'read'],
        ['acme-ltd.com/kontakt', null, 'could not be fetched'],
        ['acme-ltd.com/contacto', 404, 'HTTP 404'],
        ['acme-ltd.com/impressum', 200, 'not HTML (application/pdf)'],
        ['www.acme-ltd.com/about', null, 'could not be fetched'],
      ],
    );
  });

  it('does not follow a page that redirects off the site, and fetches nothing without followContactPages', async () => {
    let calls = 0;
    const offsite: PageFetch = async (url) => {
      calls++;
      return { url: 'https://evil.example/contact', status: 200, headers: {}, contentType: 'text/html', text: '<p>evil@evil-site.com</p>' };
    };
    const r = await findLeads(page, { followContactPages: true, fetch: offsite });
    assert.deepEqual(emails(r), ['info@acme-ltd.com', 'x@acme-ltd.com']);
    assert.ok(r.pages.slice(1).every((p) => p.skipped === 'redirected off the site'));
    calls = 0;
    const plain = await findLeads(page, { fetch: offsite });
    assert.equal(calls, 0);
    assert.deepEqual(plain.pages, [{ url: 'https://acme-ltd.com/', status: 200 }]);
  });
});
