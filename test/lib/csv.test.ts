// CSV reading and the import's detection, without services: record end offsets (what an import
// resumes from) with a BOM, CRLF, quoted newlines and Windows-1252; delimiter, header and mapping
// detection; the row check.
import test from 'ava';
import {
  CsvReader,
  CsvSyntaxError,
  detectDelimiter,
  readAll,
  Utf8Check,
  type CsvEncoding,
  type Delimiter,
} from '../../lib/csv.js';
import { analyse, checkMapping, checkRow, detectHeader, suggestMapping } from '../../domain/lists/import-csv.js';
import { AppError } from '../../domain/errors.js';

/** Every record with its end offset, feeding the bytes in pieces of `step` (boundaries anywhere). */
function records(bytes: Buffer, delimiter: Delimiter = ',', encoding: CsvEncoding = 'utf-8', step = 3, startByte = 0) {
  const r = new CsvReader({ delimiter, encoding, startByte });
  const out = [];
  for (let at = startByte; at < bytes.length; at += step) out.push(...r.write(bytes.subarray(at, at + step)));
  out.push(...r.end());
  return out;
}

test('record end offsets are file offsets: BOM, CRLF, quoted newlines and delimiters, a last line without break', (t) => {
  const text =
    '\ufeffEmail,Note\r\n"a@x.example","line one\r\nline two, with a comma"\r\nb@x.example,"say ""hi"""\r\nc@x.example,last';
  const bytes = Buffer.from(text, 'utf8');
  const recs = records(bytes);
  t.deepEqual(
    recs.map((r) => r.values),
    [
      ['Email', 'Note'],
      ['a@x.example', 'line one\r\nline two, with a comma'],
      ['b@x.example', 'say "hi"'],
      ['c@x.example', 'last'],
    ],
  );
  // The BOM (3 bytes) counts; each end is just after the record's line break.
  const ends = [3 + 'Email,Note\r\n'.length];
  ends.push(ends[0] + Buffer.byteLength('"a@x.example","line one\r\nline two, with a comma"\r\n'));
  ends.push(ends[1] + Buffer.byteLength('b@x.example,"say ""hi"""\r\n'));
  ends.push(bytes.length);
  t.deepEqual(
    recs.map((r) => r.end),
    ends,
  );
  // Resuming at any record end reads exactly the records after it.
  for (let i = 0; i < ends.length; i++) {
    t.deepEqual(
      records(bytes, ',', 'utf-8', 5, ends[i]).map((r) => r.values),
      recs.slice(i + 1).map((r) => r.values),
    );
  }
});

test('multi-byte UTF-8 split across chunks, and Windows-1252 bytes decoded per value (é, €, “”)', (t) => {
  const utf8 = Buffer.from('name;city\nZoë;Zürich €\n', 'utf8');
  t.deepEqual(
    records(utf8, ';', 'utf-8', 1).map((r) => r.values),
    [
      ['name', 'city'],
      ['Zoë', 'Zürich €'],
    ],
  );
  // "Café;5 €;“quoted”" in Windows-1252: é = E9, € = 80, “ = 93, ” = 94.
  const cp = Buffer.concat([
    Buffer.from('Caf'),
    Buffer.from([0xe9]),
    Buffer.from(';5 '),
    Buffer.from([0x80]),
    Buffer.from(';'),
    Buffer.from([0x93]),
    Buffer.from('q'),
    Buffer.from([0x94]),
    Buffer.from('\r\n'),
  ]);
  const recs = records(cp, ';', 'windows-1252', 2);
  t.deepEqual(
    recs.map((r) => r.values),
    [['Café', '5 €', '“q”']],
  );
  t.is(recs[0].end, cp.length);
  const check = new Utf8Check();
  check.write(cp);
  t.false(check.end());
  const ok = new Utf8Check();
  for (const b of utf8) ok.write(Buffer.from([b])); // every sequence cut
  t.true(ok.end());
});

test('syntax errors: an unclosed quote fails at the end with the records before it; a head cut inside a quote keeps its records', (t) => {
  const bytes = Buffer.from('a,b\nc,"open\nd,e\n');
  const r = new CsvReader({ delimiter: ',', encoding: 'utf-8' });
  const first = r.write(bytes);
  const err = t.throws(() => r.end(), { instanceOf: CsvSyntaxError });
  t.deepEqual(
    [...first, ...err!.records].map((x) => x.values),
    [['a', 'b']],
  );
  t.is(err!.recordsBefore, 1);
  // As a head (not the whole file): the cut record is dropped, no error.
  t.deepEqual(
    readAll(bytes, { delimiter: ',', encoding: 'utf-8', complete: false }).map((x) => x.values),
    [['a', 'b']],
  );
  t.throws(() => readAll(bytes, { delimiter: ',', encoding: 'utf-8', complete: true }), { instanceOf: CsvSyntaxError });
});

test('delimiter detection: comma, semicolon (with decimal commas), tab, pipe, one column', (t) => {
  const d = (s: string) => detectDelimiter(Buffer.from(s), 'utf-8', true);
  t.is(d('email,name\na@x.example,"Doe, Jane"\nb@x.example,Bob\n'), ',');
  t.is(d('email;name;score\na@x.example;Jane;1,5\nb@x.example;Bob;2,25\nc@x.example;Li;3\n'), ';');
  t.is(d('email\tname\na@x.example\tJane, Doe\n'), '\t');
  t.is(d('email|name\na@x.example|Jane\n'), '|');
  t.is(d('email\na@x.example\nb@x.example\n'), ',');
});

test('header detection and the suggested mapping (by header, then by content)', (t) => {
  t.true(
    detectHeader([
      ['E-mail', 'Prénom', 'Nom'],
      ['a@x.example', 'Ann', 'Lee'],
    ]),
  );
  t.false(
    detectHeader([
      ['a@x.example', 'Ann'],
      ['b@x.example', 'Bob'],
    ]),
  );
  t.true(
    detectHeader([
      ['Contact', 'Years'],
      ['Ann', '3'],
      ['Bob', '5'],
    ]),
  );
  t.false(
    detectHeader([
      ['Ann', 'Lee'],
      ['Bob', 'Ray'],
    ]),
  );
  const m = suggestMapping(
    ['Work Email', 'LinkedIn URL', 'Prénom', 'Nom', 'Job Title', 'Company Name', 'Website', 'Mobile', 'Something else'],
    [],
  );
  t.deepEqual(m.mapping, {
    email: 0,
    profile_url: 1,
    first_name: 2,
    last_name: 3,
    title: 4,
    company: 5,
    company_domain: 6,
    phone: 7,
  });
  t.is(m.byColumn[8], null);
  // No header: identifiers by content.
  const rows = [
    ['Ann', 'ann@x.example', 'https://pronet.example/in/ann'],
    ['Bob', 'bob@x.example', 'https://pronet.example/in/bob'],
  ];
  t.deepEqual(suggestMapping([null, null, null], rows).mapping, { email: 1, profile_url: 2 });
});

test('the row check: identifiers, lengths, column count; company domains normalised', (t) => {
  const m = { email: 0, profile_url: 1, first_name: 2, company_domain: 3 };
  const ok = checkRow([' Ann@X.Example ', '', 'Ann', 'https://www.acme.example/about'], 4, m);
  t.deepEqual(ok.row, {
    email: 'Ann@X.Example',
    emailKey: 'ann@x.example',
    profileUrl: null,
    urlKey: null,
    fields: { first_name: 'Ann', company_domain: 'acme.example' },
  });
  t.deepEqual(
    checkRow(['', '', 'Ann', ''], 4, m).problems.map((p) => p.code),
    ['missing_identifier'],
  );
  t.deepEqual(
    checkRow(['not-an-email', 'ftp://x', '', ''], 4, m).problems.map((p) => p.code),
    ['invalid_email', 'invalid_profile_url'],
  );
  t.deepEqual(
    checkRow(['a@x.example', '', 'x'.repeat(201), ''], 4, m).problems.map((p) => [p.code, p.field]),
    [['too_long', 'first_name']],
  );
  t.deepEqual(
    checkRow(['a@x.example', '', '', '', 'extra'], 4, m).problems.map((p) => p.code),
    ['column_count'],
  );
  // 200 characters of astral symbols are 400 UTF-16 units but 200 characters: accepted.
  t.truthy(checkRow(['a@x.example', '', '😀'.repeat(200), ''], 4, m).row);
  const bad = t.throws(() => checkMapping({ first_name: 0 }, 3), { instanceOf: AppError });
  t.is(bad!.code, 'invalid_mapping');
  t.throws(() => checkMapping({ email: 0, first_name: 0 }, 3), { message: /mapped twice/ });
  t.throws(() => checkMapping({ email: 3 }, 3), { message: /no column 3/ });
});

test('analyse: a semicolon file in Windows-1252 with a BOM-less header, CRLF and a quoted newline', (t) => {
  // ¤ (A4 in latin1) stands for € (80 in Windows-1252, absent from latin1).
  const text = 'Email;Prénom;Société;Notes\r\nzoe@x.example;Zoé;Café ¤;"two\r\nlines"\r\n;Nobody;;\r\nbad;Bad;;\r\n';
  const bytes = Buffer.from(text, 'latin1');
  bytes[bytes.indexOf(0xa4)] = 0x80;
  const a = analyse(bytes, { complete: true, utf8: false, bom: false });
  t.like(a, { encoding: 'windows-1252', delimiter: ';', hasHeader: true, headerRow: 1, columnCount: 4 });
  t.deepEqual(a.suggestedMapping, { email: 0, first_name: 1, company: 2 });
  t.deepEqual(a.sample.rows[0], ['zoe@x.example', 'Zoé', 'Café €', 'two\r\nlines']);
  t.like(a.sample, { rows_checked: 3, valid: 1, invalid: 2, complete: true });
  t.deepEqual(
    a.sample.problems.map((p) => [p.row, p.reasons.map((r) => r.code)]),
    [
      [3, ['missing_identifier']],
      [4, ['invalid_email']],
    ],
  );
});
