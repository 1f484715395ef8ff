import test from 'ava';
import { dedupeKeys, normaliseDomain, normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';

test('emails: trimmed, lower-cased, NFC, IDN domains in ASCII', (t) => {
  t.is(normaliseEmail('  Jane.Doe@Example.COM '), 'jane.doe@example.com');
  t.is(normaliseEmail('mailto:Sales@Acme.io'), 'sales@acme.io');
  t.is(normaliseEmail('first+tag@example.com'), 'first+tag@example.com'); // +tags are kept: distinct addresses in general
  t.is(normaliseEmail('jürgen@müller.de'), 'jürgen@xn--mller-kva.de');
  // Decomposed "ü" (u + U+0308) equals the composed one.
  t.is(normaliseEmail('JU\u0308RGEN@MU\u0308LLER.DE'), 'jürgen@xn--mller-kva.de');
  t.is(normaliseEmail('a@example.com.'), 'a@example.com');
});

test('emails: invalid ones are null', (t) => {
  for (const bad of [
    '',
    '   ',
    'plain',
    '@example.com',
    'a@',
    'a@b',
    'a@@b.com',
    'a@b@c.com',
    'a..b@c.com',
    '.a@c.com',
    'a.@c.com',
    'a b@c.com',
    'a@-b.com',
    'a@b-.com',
    'a@b.c1',
    'a@localhost',
    'a@1.2.3.4',
    'a@[127.0.0.1]',
    'a@exa_mple.com',
    `${'x'.repeat(65)}@a.com`,
    `a@${'b'.repeat(250)}.com`,
    'a"b@c.com',
    'a\u0000@c.com',
  ])
    t.is(normaliseEmail(bad), null, bad);
  t.is(normaliseEmail(null), null);
  t.is(normaliseEmail(undefined), null);
});

test('domains: from a bare name, a URL or an email; www, port, path and trailing dot dropped', (t) => {
  t.is(normaliseDomain('WWW.Example.com.'), 'example.com');
  t.is(normaliseDomain('https://www.acme.io:8080/pricing?x=1#top'), 'acme.io');
  t.is(normaliseDomain('bob@Acme.COM'), 'acme.com');
  t.is(normaliseDomain('müller.de'), 'xn--mller-kva.de');
  t.is(normaliseDomain('mu\u0308ller.de'), 'xn--mller-kva.de');
  t.is(normaliseDomain('sub.acme.co.uk'), 'sub.acme.co.uk');
  for (const bad of ['', 'localhost', '1.2.3.4', '[::1]', 'exa_mple.com', 'acme', 'http://', 'a..b.com'])
    t.is(normaliseDomain(bad), null, bad);
});

test('profile URLs: scheme, host case, www, query, fragment and trailing slash', (t) => {
  const canonical = 'https://pronet.example/in/jane-doe';
  for (const u of [
    'https://pronet.example/in/jane-doe',
    'HTTPS://WWW.Pronet.Example/in/Jane-Doe/',
    'http://pronet.example/in/jane-doe?trk=public_profile&locale=de_DE#experience',
    'pronet.example/in/jane-doe',
    '//www.pronet.example/in/jane-doe//',
    '  https://pronet.example./in/jane-doe  ',
  ])
    t.is(normaliseProfileUrl(u), canonical, u);
});

test('profile URLs: the network path forms, locales and sub-pages map to /in/<slug>', (t) => {
  const canonical = 'https://pronet.example/in/jane-doe';
  for (const u of [
    'https://de.pronet.example/in/jane-doe',
    'https://m.pronet.example/in/jane-doe',
    'https://pronet.example/de/in/jane-doe',
    'https://pronet.example/en-us/in/jane-doe',
    'https://pronet.example/m/in/jane-doe',
    'https://pronet.example/in/jane-doe/fr',
    'https://pronet.example/in/jane-doe/details/experience/',
    'https://pronet.example/in/jane-doe/recent-activity/all/',
    'https://pronet.example/profile/jane-doe',
    'https://pronet.example/people/Jane-Doe',
    'https://pronet.example/pub/jane-doe/12/345/678',
  ])
    t.is(normaliseProfileUrl(u), canonical, u);
  // Other pages of the network keep their path.
  t.is(normaliseProfileUrl('https://www.pronet.example/company/acme/'), 'https://pronet.example/company/acme');
  // Another network host list.
  t.is(normaliseProfileUrl('https://www.Social.test/in/Bob/', ['social.test']), 'https://social.test/in/bob');
  t.is(normaliseProfileUrl('https://www.Social.test/in/Bob/'), 'https://social.test/in/Bob'); // not a network host: case kept
});

test('profile URLs: percent-encoding and Unicode have one spelling', (t) => {
  const canonical = 'https://pronet.example/in/j%C3%BCrgen-m%C3%BCller';
  for (const u of [
    'https://pronet.example/in/jürgen-müller',
    'https://pronet.example/in/J%C3%BCrgen-M%C3%BCller',
    'https://pronet.example/in/j%c3%bcrgen-m%c3%bcller/',
    'https://pronet.example/in/ju\u0308rgen-mu\u0308ller',
    'https://pronet.example/in/ju%CC%88rgen-mu%CC%88ller',
    'https://pronet.example/in/J%C3%9CRGEN-M%C3%9CLLER',
  ])
    t.is(normaliseProfileUrl(u), canonical, u);
  // Elsewhere: %7E and ~ are one spelling, an encoded slash stays encoded, IDN hosts come out in ASCII.
  t.is(normaliseProfileUrl('https://example.com/%7Ebob'), 'https://example.com/~bob');
  t.is(normaliseProfileUrl('https://example.com/a%2Fb'), 'https://example.com/a%2Fb');
  t.is(normaliseProfileUrl('https://müller.de/Team/a b'), 'https://xn--mller-kva.de/Team/a%20b');
  t.is(normaliseProfileUrl('https://example.com:8443/u/x'), 'https://example.com:8443/u/x');
});

test('profile URLs: what is not an http(s) URL is null', (t) => {
  for (const bad of [
    '',
    '   ',
    'mailto:a@b.com',
    'ftp://pronet.example/in/x',
    'javascript:alert(1)',
    'https://',
    'https://pronet.example/in/%E0%A4%A',
    'http://[::1',
  ]) {
    t.is(normaliseProfileUrl(bad), null, bad);
  }
  t.is(normaliseProfileUrl(null), null);
});

test('dedupeKeys: both identifiers normalised, keys for whichever is known', (t) => {
  t.deepEqual(dedupeKeys({ email: ' Jane@Acme.COM', profileUrl: 'https://www.pronet.example/in/Jane/' }), {
    email: 'jane@acme.com',
    profileUrl: 'https://pronet.example/in/jane',
    keys: ['email:jane@acme.com', 'profile:https://pronet.example/in/jane'],
  });
  t.deepEqual(dedupeKeys({ email: 'not an email', profileUrl: null }), { email: null, profileUrl: null, keys: [] });
  t.deepEqual(dedupeKeys({ profileUrl: 'pronet.example/in/x' }).keys, ['profile:https://pronet.example/in/x']);
});
