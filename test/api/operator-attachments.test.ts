// Operator attachments: POST /api/agent/attachments (multipart/form-data). Typing by content, text
// extraction (text files and PDFs built here by hand), the 2 MiB limit enforced while streaming,
// every documented code, ownership across users and workspaces, the shared agent group, and
// requireChatAttachments for the messages route.
import test from 'ava';
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { AgentAttachment } from '../../db/entities/AgentAttachment.js';
import { AgentThread } from '../../db/entities/AgentThread.js';
import { DEMO_USER_ID } from '../../domain/demo/seed.js';
import {
  MAX_ATTACHMENT_BYTES,
  MAX_ATTACHMENT_CHARS,
  requireChatAttachments,
  sanitizeFilename,
  detectType,
} from '../../domain/operator/attachments.js';
import type { Actor } from '../../domain/identity.js';
import { uuidv7 } from '../../lib/ids.js';
import { api, call, closeApi, createTestApp, createUser, listen, type Res, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { addTeamMember, failInserts } from '../helpers/db.js';
import { postSse } from '../helpers/sse.js';
test.after.always(closeApi);

const URL_PATH = '/api/agent/attachments';
const MiB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Hand-made PDFs.

/** A one-page PDF (Helvetica, not embedded) whose content stream is `content`, with a correct xref table. */
function pdf(content: string): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
const textPdf = (...lines: string[]) =>
  pdf(`BT /F1 12 Tf 72 720 Td 14 TL ${lines.map((l) => `(${l}) Tj T*`).join(' ')} ET`);
/** Only graphics (a scan would be an image): no text at all. */
const blankPdf = () => pdf('0 0 m 200 200 l S');
/** Starts like a PDF, but nothing after the header is one. */
const corruptPdf = () => Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\nthis is not a PDF body at all\n%%EOF\n', 'latin1');
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

// ---------------------------------------------------------------------------------------------
// Requests.

interface FilePart {
  data: Buffer | string;
  name?: string;
  type?: string;
}
interface Upload {
  file?: FilePart;
  app_id?: string;
  thread_id?: string;
  headers?: Record<string, string>;
  base?: string;
}

const parse = async (res: Response): Promise<Res> => {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers, text };
};

/** A multipart upload as a browser's FormData sends it. */
async function upload(u: TestUser, p: Upload): Promise<Res> {
  const form = new FormData();
  if (p.app_id !== undefined) form.append('app_id', p.app_id);
  if (p.thread_id !== undefined) form.append('thread_id', p.thread_id);
  if (p.file)
    form.append(
      'file',
      new Blob([p.file.data], { type: p.file.type ?? 'application/octet-stream' }),
      p.file.name ?? 'notes.txt',
    );
  const base = p.base ?? (await api()).base;
  return parse(
    await fetch(base + URL_PATH, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${u.accessToken}`, ...p.headers },
    }),
  );
}

/** A hand-written multipart body (for malformed forms and exact bytes). */
async function raw(
  u: TestUser,
  body: Buffer | string,
  contentType: string,
  headers: Record<string, string> = {},
): Promise<Res> {
  const base = (await api()).base;
  return parse(
    await fetch(base + URL_PATH, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${u.accessToken}`, 'content-type': contentType, ...headers },
    }),
  );
}

const B = 'test-boundary-7f3a';
const MULTIPART = `multipart/form-data; boundary=${B}`;
const field = (name: string, value: string) =>
  `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const filePart = (name: string, filename: string, data: string) =>
  `--${B}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n${data}\r\n`;
const END = `--${B}--\r\n`;

const auth = (u: TestUser, headers: Record<string, string> = {}) => ({ token: u.accessToken, headers });

async function expectError(t: any, r: Res, status: number, code: string, what = '') {
  t.is(r.status, status, `${what}: ${r.text}`);
  t.is(r.body?.error?.code, code, what);
}

async function ownerWithApp() {
  const u = await createOwner();
  const app = await createTestApp(u);
  return { u, appId: app.id };
}

const stored = async (id: string) => (await em()).findOneOrFail(AgentAttachment, id);

// ---------------------------------------------------------------------------------------------

test('a text file without thread_id: 201 with exactly the spec fields, a new thread of (user, product), the bytes hashed and the text kept', async (t) => {
  const { u, appId } = await ownerWithApp();
  const data = '# Pricing notes\n\nEnterprise tier: **$49/seat**.\n';
  const r = await upload(u, { app_id: appId, file: { data, name: 'pricing.md', type: 'text/markdown' } });
  t.is(r.status, 201, r.text);
  t.deepEqual(Object.keys(r.body).sort(), [
    'content_type',
    'extraction_status',
    'file_id',
    'filename',
    'size_bytes',
    'thread_id',
  ]);
  t.like(r.body, {
    filename: 'pricing.md',
    content_type: 'text/markdown',
    size_bytes: Buffer.byteLength(data),
    extraction_status: 'extracted',
  });
  // The thread was created for this user and product, and is readable as one of theirs.
  const th = await call('GET', `/api/agent/threads/${r.body.thread_id}`, auth(u));
  t.is(th.status, 200, th.text);
  t.is(th.body.app_id, appId);
  const row = await stored(r.body.file_id);
  t.is(row.sha256, createHash('sha256').update(data).digest('hex'));
  t.is(row.text, data);
  t.is(row.userId, u.id);
  t.is(row.workspace.id, await workspaceIdOf(u.id));
  // A second file into the same thread: no new thread.
  const second = await upload(u, {
    app_id: appId,
    thread_id: r.body.thread_id,
    file: { data: 'a,b\n1,2\n', name: 'data.csv' },
  });
  t.is(second.status, 201, second.text);
  t.is(second.body.thread_id, r.body.thread_id);
  t.is(await (await em()).count(AgentThread, { app: appId }), 1);
});

test('the type comes from the content: text subtypes, a PDF under a .txt name, an image under a .txt name is refused', async (t) => {
  const { u, appId } = await ownerWithApp();
  const cases: [FilePart, string][] = [
    [{ data: 'name,company,title\nAda,Acme,CTO\nLin,Globex,CEO\n', name: 'leads' }, 'text/csv'],
    [{ data: '{"plan": "pro", "seats": [1, 2]}', name: 'config.txt' }, 'application/json'],
    [{ data: '<!DOCTYPE html><html><body><p>Hi</p></body></html>', name: 'page' }, 'text/html'],
    [{ data: '<?xml version="1.0"?><note>hi</note>', name: 'note' }, 'application/xml'],
    [{ data: 'Just a few words.\nAnd a second line.', name: 'words.pdf', type: 'application/pdf' }, 'text/plain'],
    [{ data: textPdf('Quarterly report'), name: 'report.txt', type: 'text/plain' }, 'application/pdf'],
    [{ data: '\ufeffWith a byte order mark', name: 'bom.txt' }, 'text/plain'],
  ];
  for (const [file, type] of cases) {
    const r = await upload(u, { app_id: appId, file });
    t.is(r.status, 201, `${file.name}: ${r.text}`);
    t.is(r.body.content_type, type, String(file.name));
  }
  const bom = await (await em()).findOneOrFail(AgentAttachment, { filename: 'bom.txt', userId: u.id });
  t.is(bom.text, 'With a byte order mark');
  const refused: [FilePart, string][] = [
    [{ data: PNG, name: 'notes.txt', type: 'text/plain' }, 'a PNG image'],
    [{ data: Buffer.from('504b0304140000000800', 'hex'), name: 'archive.csv' }, 'a zip archive'],
    [{ data: Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x21]), name: 'latin.txt' }, 'invalid UTF-8'],
    [{ data: 'text with a \u0000 NUL', name: 'nul.txt' }, 'a NUL byte'],
    [{ data: Buffer.alloc(0), name: 'empty.txt' }, 'an empty file'],
  ];
  for (const [file, what] of refused)
    await expectError(t, await upload(u, { app_id: appId, file }), 400, 'invalid_file', what);
  t.is(await (await em()).count(AgentAttachment, { userId: u.id }), cases.length);
});

test('PDFs: text is extracted; a PDF without text is `empty`; a corrupt one is `failed`; all are stored', async (t) => {
  const { u, appId } = await ownerWithApp();
  const good = await upload(u, {
    app_id: appId,
    file: { data: textPdf('Hello from a PDF', 'Second line'), name: 'brief.pdf', type: 'application/pdf' },
  });
  t.is(good.status, 201, good.text);
  t.like(good.body, { content_type: 'application/pdf', extraction_status: 'extracted', filename: 'brief.pdf' });
  const text = (await stored(good.body.file_id)).text ?? '';
  t.true(text.includes('Hello from a PDF') && text.includes('Second line'), text);
  const blank = await upload(u, {
    app_id: appId,
    thread_id: good.body.thread_id,
    file: { data: blankPdf(), name: 'scan.pdf' },
  });
  t.is(blank.status, 201, blank.text);
  t.like(blank.body, { content_type: 'application/pdf', extraction_status: 'empty' });
  t.is((await stored(blank.body.file_id)).text, null);
  const corrupt = await upload(u, {
    app_id: appId,
    thread_id: good.body.thread_id,
    file: { data: corruptPdf(), name: 'broken.pdf' },
  });
  t.is(corrupt.status, 201, corrupt.text);
  t.like(corrupt.body, {
    content_type: 'application/pdf',
    extraction_status: 'failed',
    size_bytes: corruptPdf().length,
  });
  t.is((await stored(corrupt.body.file_id)).text, null);
});

test('size: exactly 2 MiB is accepted (the text kept to 200,000 characters, `truncated`); 2 MiB + 1 byte is 413 file_too_large and nothing is stored', async (t) => {
  const { u, appId } = await ownerWithApp();
  const ok = await upload(u, {
    app_id: appId,
    file: { data: Buffer.alloc(MAX_ATTACHMENT_BYTES, 'a'), name: 'big.txt' },
  });
  t.is(ok.status, 201, ok.text);
  t.like(ok.body, { size_bytes: 2 * MiB, extraction_status: 'truncated', content_type: 'text/plain' });
  t.is((await stored(ok.body.file_id)).text?.length, MAX_ATTACHMENT_CHARS);
  const over = await upload(u, {
    app_id: appId,
    file: { data: Buffer.alloc(MAX_ATTACHMENT_BYTES + 1, 'a'), name: 'bigger.txt' },
  });
  await expectError(t, over, 413, 'file_too_large', '2 MiB + 1');
  t.is(await (await em()).count(AgentAttachment, { userId: u.id }), 1);
  t.is(await (await em()).count(AgentThread, { user: u.id }), 1);
});

/**
 * Sends the head of a multipart upload that declares `declared` file bytes, then file bytes until
 * `sendAtMost`, and stops as soon as a response arrives. A server that read the whole body before
 * answering would never answer (the test would time out).
 */
async function partialUpload(base: string, token: string, appId: string, declared: number, sendAtMost: number) {
  const head = Buffer.from(
    `${field('app_id', appId)}--${B}\r\nContent-Disposition: form-data; name="file"; filename="huge.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n${END}`);
  const req = request(`${base}${URL_PATH}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': MULTIPART,
      'content-length': head.length + declared + tail.length,
    },
  });
  req.on('error', () => {}); // the server closes the connection after its answer
  const response = new Promise<{ status: number; body: any; connection?: string }>((resolve) =>
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), connection: res.headers.connection }),
      );
      res.on('error', () => resolve({ status: res.statusCode ?? 0, body: undefined }));
    }),
  );
  let answered = false;
  void response.then(() => (answered = true));
  req.write(head);
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let sent = 0;
  while (sent < sendAtMost && !answered) {
    sent += chunk.length;
    if (!req.write(chunk)) await Promise.race([once(req, 'drain'), response]);
  }
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`no answer after sending ${sent} of ${declared} bytes`)), 15_000).unref(),
  );
  const res = await Promise.race([response, timeout]);
  req.destroy();
  return { ...res, sent };
}

test('a 10 MiB upload is refused while it streams: 413 file_too_large before the client has sent it, the server reads little past 2 MiB, and closes the connection', async (t) => {
  const { u, appId } = await ownerWithApp();
  const { services } = await api();
  const { base, server } = await listen(services);
  const sockets: Socket[] = [];
  server.on('connection', (s: Socket) => sockets.push(s));
  const r = await partialUpload(base, u.accessToken, appId, 10 * MiB, 4 * MiB);
  t.is(r.status, 413);
  t.is(r.body.error.code, 'file_too_large');
  t.is(r.connection, 'close');
  t.true(r.sent < 10 * MiB, `sent ${r.sent}`);
  const [socket] = sockets;
  if (!socket.destroyed) await once(socket, 'close');
  // The file limit, the part headers, and what was already in flight: far less than was sent (4 MiB).
  t.true(socket.bytesRead < 2 * MiB + 512 * 1024, `server read ${socket.bytesRead} bytes`);
  t.is(await (await em()).count(AgentAttachment, { userId: u.id }), 0);
});

test('the plan is checked before the body is read: a free plan is 402 (empty code) while a 10 MiB upload is still being sent', async (t) => {
  const free = await createUser();
  const app = await createTestApp(free);
  const r = await partialUpload((await api()).base, free.accessToken, app.id, 10 * MiB, 4 * MiB);
  t.is(r.status, 402);
  t.is(r.body.error.code, '');
  t.is(r.connection, 'close');
  // And an ordinary small upload on the free plan.
  const small = await upload(free, { app_id: app.id, file: { data: 'hello' } });
  t.is(small.status, 402, small.text);
  t.is(small.body.error.code, '');
});

test('400 codes: invalid_app, invalid_thread, missing_file, invalid_user, invalid_upload (not multipart, malformed, unknown or repeated field)', async (t) => {
  const { u, appId } = await ownerWithApp();
  const file = { data: 'hello' };
  await expectError(t, await upload(u, { file }), 400, 'invalid_app', 'no app_id');
  await expectError(t, await upload(u, { app_id: 'not-a-uuid', file }), 400, 'invalid_app', 'malformed app_id');
  await expectError(
    t,
    await upload(u, { app_id: appId, thread_id: 'nope', file }),
    400,
    'invalid_thread',
    'malformed thread_id',
  );
  await expectError(
    t,
    await upload(u, { app_id: appId, thread_id: '', file }),
    400,
    'invalid_thread',
    'empty thread_id',
  );
  await expectError(t, await upload(u, { app_id: appId }), 400, 'missing_file', 'no file');
  await expectError(
    t,
    await raw(u, field('app_id', appId) + field('file', 'hello') + END, MULTIPART),
    400,
    'missing_file',
    'file as a text field',
  );
  await expectError(
    t,
    await upload(u, { app_id: appId, file, headers: { 'x-acting-as': 'nope' } }),
    400,
    'invalid_user',
    'bad X-Acting-As',
  );
  await expectError(
    t,
    await raw(u, JSON.stringify({ app_id: appId }), 'application/json'),
    400,
    'invalid_upload',
    'JSON body',
  );
  await expectError(t, await raw(u, 'x', 'multipart/form-data'), 400, 'invalid_upload', 'no boundary');
  await expectError(
    t,
    await raw(u, field('app_id', appId) + filePart('file', 'a.txt', 'cut sh'), MULTIPART),
    400,
    'invalid_upload',
    'no closing boundary',
  );
  await expectError(
    t,
    await raw(u, `--${B}\r\nnot a header line\r\n\r\nx\r\n${END}`, MULTIPART),
    400,
    'invalid_upload',
    'broken part header',
  );
  await expectError(
    t,
    await raw(u, field('app_id', appId) + field('color', 'blue') + filePart('file', 'a.txt', 'hi') + END, MULTIPART),
    400,
    'invalid_upload',
    'unknown field',
  );
  await expectError(
    t,
    await raw(u, field('app_id', appId) + field('app_id', appId) + filePart('file', 'a.txt', 'hi') + END, MULTIPART),
    400,
    'invalid_upload',
    'repeated field',
  );
  await expectError(
    t,
    await raw(u, field('app_id', appId) + filePart('attachment', 'a.txt', 'hi') + END, MULTIPART),
    400,
    'invalid_upload',
    'file under another name',
  );
  t.is(await (await em()).count(AgentAttachment, { userId: u.id }), 0);
});

test('413 invalid_upload: a second file, an oversized field value', async (t) => {
  const { u, appId } = await ownerWithApp();
  await expectError(
    t,
    await raw(
      u,
      field('app_id', appId) + filePart('file', 'a.txt', 'one') + filePart('file', 'b.txt', 'two') + END,
      MULTIPART,
    ),
    413,
    'invalid_upload',
    'two files',
  );
  await expectError(
    t,
    await raw(u, field('app_id', 'x'.repeat(5000)) + filePart('file', 'a.txt', 'one') + END, MULTIPART),
    413,
    'invalid_upload',
    'long field',
  );
  t.is(await (await em()).count(AgentAttachment, { userId: u.id }), 0);
});

test('403 app_not_owned (another workspace’s product) and not_assigned (a member without the product); 403 demo_read_only in the Demo', async (t) => {
  const { u: owner, appId } = await ownerWithApp();
  const other = await createTestApp(owner, 'Other product');
  const stranger = await createOwner();
  await expectError(
    t,
    await upload(stranger, { app_id: appId, file: { data: 'hi' } }),
    403,
    'app_not_owned',
    'foreign product',
  );
  const member = await createUser();
  await addTeamMember(owner.id, member.id, { appIds: [other.id] });
  const asOwner = { 'x-acting-as': owner.id };
  await expectError(
    t,
    await upload(member, { app_id: appId, file: { data: 'hi' }, headers: asOwner }),
    403,
    'not_assigned',
    'member without the product',
  );
  const ok = await upload(member, { app_id: other.id, file: { data: 'hi' }, headers: asOwner });
  t.is(ok.status, 201, ok.text);
  // The Demo workspace is read-only for the Operator.
  const visitor = await createUser();
  t.is((await call('POST', '/api/me/workspaces/demo/join', auth(visitor))).status, 201);
  const apps = await call('GET', '/api/apps', auth(visitor, { 'x-acting-as': DEMO_USER_ID }));
  const demoApp = (apps.body.items ?? apps.body)[0].id;
  await expectError(
    t,
    await upload(visitor, { app_id: demoApp, file: { data: 'hi' }, headers: { 'x-acting-as': DEMO_USER_ID } }),
    403,
    'demo_read_only',
    'Demo',
  );
});

test('404 thread_not_found: unknown, another product’s, another user’s (same workspace or another), and nothing is stored', async (t) => {
  const { u: owner, appId } = await ownerWithApp();
  const other = await createTestApp(owner, 'Other product');
  const mine = await upload(owner, { app_id: appId, file: { data: 'first' } });
  t.is(mine.status, 201, mine.text);
  const thread = mine.body.thread_id;
  await expectError(
    t,
    await upload(owner, { app_id: appId, thread_id: uuidv7(), file: { data: 'x' } }),
    404,
    'thread_not_found',
    'unknown thread',
  );
  await expectError(
    t,
    await upload(owner, { app_id: other.id, thread_id: thread, file: { data: 'x' } }),
    404,
    'thread_not_found',
    'thread of another product',
  );
  // Another workspace: its own product, the owner's thread id.
  const stranger = await createOwner();
  const strangerApp = await createTestApp(stranger);
  await expectError(
    t,
    await upload(stranger, { app_id: strangerApp.id, thread_id: thread, file: { data: 'x' } }),
    404,
    'thread_not_found',
    'cross-workspace',
  );
  // A member of the same workspace, with the product: threads are per user.
  const member = await createUser();
  await addTeamMember(owner.id, member.id);
  await expectError(
    t,
    await upload(member, {
      app_id: appId,
      thread_id: thread,
      file: { data: 'x' },
      headers: { 'x-acting-as': owner.id },
    }),
    404,
    'thread_not_found',
    'another user’s thread',
  );
  t.is(await (await em()).count(AgentAttachment, { thread }), 1);
});

test('422 pdf_extraction_unavailable when the PDF extractor cannot be loaded; text files still work and no thread is left behind', async (t) => {
  const { u, appId } = await ownerWithApp();
  const { services } = await api();
  const { base } = await listen({ ...services, pdf: () => Promise.reject(new Error('Cannot find package unpdf')) });
  await expectError(
    t,
    await upload(u, { base, app_id: appId, file: { data: textPdf('Hi'), name: 'a.pdf' } }),
    422,
    'pdf_extraction_unavailable',
    'no extractor',
  );
  t.is(await (await em()).count(AgentThread, { user: u.id }), 0);
  const text = await upload(u, { base, app_id: appId, file: { data: 'plain text' } });
  t.is(text.status, 201, text.text);
});

test('500 thread_create_failed when the new thread cannot be stored, 500 upload_failed when the attachment row cannot; nothing is left behind', async (t) => {
  const { u, appId } = await ownerWithApp();
  // Real database failures, injected for this product's threads, then for this user's attachments.
  const threads = await failInserts('agent_threads', `new.app_id = '${appId}'`);
  t.teardown(() => threads.remove());
  await expectError(
    t,
    await upload(u, { app_id: appId, file: { data: 'notes' } }),
    500,
    'thread_create_failed',
    'no thread',
  );
  t.is(await (await em()).count(AgentThread, { user: u.id }), 0);
  t.is(await (await em()).count(AgentAttachment, { userId: u.id }), 0);
  await threads.remove();

  const rows = await failInserts('agent_attachments', `new.user_id = '${u.id}'`);
  t.teardown(() => rows.remove());
  // Without thread_id: the thread made in the same transaction goes too.
  await expectError(t, await upload(u, { app_id: appId, file: { data: 'notes' } }), 500, 'upload_failed', 'new thread');
  t.is(await (await em()).count(AgentThread, { user: u.id }), 0, 'no empty thread left behind');
  // Into an existing thread.
  const thread = await call('POST', '/api/agent/threads', { ...auth(u), body: { app_id: appId } });
  t.is(thread.status, 201, thread.text);
  await expectError(
    t,
    await upload(u, { app_id: appId, thread_id: thread.body.id, file: { data: 'notes' } }),
    500,
    'upload_failed',
    'existing thread',
  );
  t.is(await (await em()).count(AgentAttachment, { userId: u.id }), 0);
  await rows.remove();

  const ok = await upload(u, { app_id: appId, thread_id: thread.body.id, file: { data: 'notes' } });
  t.is(ok.status, 201, ok.text);
});

test('file names: base name only, control and bidirectional characters removed, at most 255 characters with the extension kept', async (t) => {
  const { u, appId } = await ownerWithApp();
  // A control character cannot be sent raw in a header; the RFC 8187 form (`filename*`) carries it.
  const part = `--${B}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''..%2F..%2Fetc%2Fre%07port%E2%80%AEgpj.txt\r\n\r\nhello\r\n`;
  const r = await raw(u, field('app_id', appId) + part + END, MULTIPART);
  t.is(r.status, 201, r.text);
  t.is(r.body.filename, 'reportgpj.txt');
  const accents = await upload(u, { app_id: appId, file: { data: 'bonjour', name: 'résumé été.txt' } });
  t.is(accents.body.filename, 'résumé été.txt');
  const long = await upload(u, { app_id: appId, file: { data: '# Notes', name: `${'n'.repeat(400)}.md` } });
  t.is(long.body.filename.length, 255);
  t.true(long.body.filename.endsWith('.md'));
  const text = { kind: 'text', contentType: 'text/plain', extension: 'txt' } as const;
  t.is(sanitizeFilename(undefined, text), 'attachment.txt');
  t.is(sanitizeFilename('C:\\Users\\me\\plan.txt', text), 'plan.txt');
  t.is(sanitizeFilename('../..', text), 'attachment.txt');
  t.is(sanitizeFilename(' \u0000 ', detectType(textPdf('x'))), 'attachment.pdf');
  t.is(sanitizeFilename(`${'😀'.repeat(200)}.txt`, text).length <= 255, true);
});

test('the agent group is shared: the 21st request of a minute (uploads and thread lists mixed) is 429', async (t) => {
  const { u, appId } = await ownerWithApp();
  const statuses: number[] = [];
  for (let i = 0; i < 10; i++) statuses.push((await upload(u, { app_id: appId, file: { data: `note ${i}` } })).status);
  for (let i = 0; i < 10; i++) statuses.push((await call('GET', `/api/agent/threads?app_id=${appId}`, auth(u))).status);
  t.deepEqual([...new Set(statuses)].sort(), [200, 201]);
  const r = await upload(u, { app_id: appId, file: { data: 'one too many' } });
  await expectError(t, r, 429, 'rate_limited', '21st');
  t.truthy(r.headers.get('retry-after'));
});

test('the agent group is shared by uploads and chat messages: the 21st of a minute (10 uploads, 10 messages, mixed) is 429 on either route', async (t) => {
  const { u, appId } = await ownerWithApp();
  const statuses: number[] = [];
  for (let i = 0; i < 10; i++) {
    statuses.push((await upload(u, { app_id: appId, file: { data: `note ${i}` } })).status);
    statuses.push((await postSse('/api/agent/messages', u.accessToken, { app_id: appId })).status); // a 400 counts too
  }
  t.deepEqual([...new Set(statuses)].sort(), [201, 400]);
  const message = await postSse('/api/agent/messages', u.accessToken, { app_id: appId, message: 'one too many' });
  t.is(message.status, 429, JSON.stringify(message.error));
  t.is(message.error.error.code, 'rate_limited');
  const file = await upload(u, { app_id: appId, file: { data: 'one too many' } });
  await expectError(t, file, 429, 'rate_limited', 'the upload after it');
  t.truthy(file.headers.get('retry-after'));
});

test('requireChatAttachments: the thread’s attachments with text, in order; 404 attachment_not_found and 422 attachment_unavailable otherwise', async (t) => {
  const { u, appId } = await ownerWithApp();
  const a = await upload(u, { app_id: appId, file: { data: 'Alpha notes', name: 'a.txt' } });
  const thread = a.body.thread_id;
  const b = await upload(u, { app_id: appId, thread_id: thread, file: { data: textPdf('Beta'), name: 'b.pdf' } });
  const scan = await upload(u, { app_id: appId, thread_id: thread, file: { data: blankPdf(), name: 'scan.pdf' } });
  const broken = await upload(u, {
    app_id: appId,
    thread_id: thread,
    file: { data: corruptPdf(), name: 'broken.pdf' },
  });
  const elsewhere = await upload(u, { app_id: appId, file: { data: 'other thread' } });
  t.not(elsewhere.body.thread_id, thread);
  const workspaceId = await workspaceIdOf(u.id);
  const actor: Actor = {
    userId: u.id,
    workspaceId,
    ownerId: u.id,
    role: 'owner',
    allApps: true,
    appIds: [],
    actingAs: false,
    isDemo: false,
  };
  const got = await requireChatAttachments(await em(), actor, thread, [b.body.file_id, a.body.file_id.toUpperCase()]);
  t.deepEqual(
    got.map((x) => [x.id, x.filename]),
    [
      [b.body.file_id, 'b.pdf'],
      [a.body.file_id, 'a.txt'],
    ],
  );
  t.is(got[1].text, 'Alpha notes');
  t.true(got[0].text.includes('Beta'));
  t.deepEqual(await requireChatAttachments(await em(), actor, thread, []), []);
  const fails = async (ids: string[], status: number, code: string, who: Actor = actor) => {
    const err = await t.throwsAsync(requireChatAttachments(await em(), who, thread, ids));
    t.like(err, { status, code }, ids.join(','));
  };
  await fails([a.body.file_id, elsewhere.body.file_id], 404, 'attachment_not_found');
  await fails([randomUUID()], 404, 'attachment_not_found');
  await fails(['not-a-uuid'], 404, 'attachment_not_found');
  await fails([scan.body.file_id], 422, 'attachment_unavailable');
  await fails([broken.body.file_id], 422, 'attachment_unavailable');
  // Another user, even naming the right thread, sees none of them.
  const stranger = await createOwner();
  await fails([a.body.file_id], 404, 'attachment_not_found', {
    ...actor,
    userId: stranger.id,
    ownerId: stranger.id,
    workspaceId: await workspaceIdOf(stranger.id),
  });
});

test('a message names attachments of its thread: the turn runs with them and the history records them; one without text is 422', async (t) => {
  const { u, appId } = await ownerWithApp();
  const notes = await upload(u, {
    app_id: appId,
    file: { data: 'Budget: 40k. Decision maker: the CFO.', name: 'call-notes.txt' },
  });
  t.is(notes.status, 201, notes.text);
  const thread = notes.body.thread_id;
  const r = await postSse('/api/agent/messages', u.accessToken, {
    app_id: appId,
    thread_id: thread,
    message: 'Summarise the notes',
    attachment_ids: [notes.body.file_id],
  });
  t.is(r.status, 200, JSON.stringify(r.error));
  t.is(r.events[0]?.event, 'turn');
  const history = await call('GET', `/api/agent/threads/${thread}/messages`, auth(u));
  const asked = history.body.find((m: { role: string }) => m.role === 'user');
  t.deepEqual(asked.attachment_ids, [notes.body.file_id]);
  const scan = await upload(u, { app_id: appId, thread_id: thread, file: { data: blankPdf(), name: 'scan.pdf' } });
  const refused = await postSse('/api/agent/messages', u.accessToken, {
    app_id: appId,
    thread_id: thread,
    message: 'And this?',
    attachment_ids: [scan.body.file_id],
  });
  t.is(refused.status, 422);
  t.is(refused.error.error.code, 'attachment_unavailable');
  // Another thread's attachment: 404.
  const other = await upload(u, { app_id: appId, file: { data: 'elsewhere' } });
  const foreign = await postSse('/api/agent/messages', u.accessToken, {
    app_id: appId,
    thread_id: thread,
    message: 'And that?',
    attachment_ids: [other.body.file_id],
  });
  t.is(foreign.status, 404);
  t.is(foreign.error.error.code, 'attachment_not_found');
});
