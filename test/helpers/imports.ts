// CSV imports in tests: multipart uploads as a browser's FormData sends them, and waiting for an
// import to end.
import { api, call, type Res, type TestUser } from './api.js';

export const FINAL = ['completed', 'failed', 'canceled'];

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

export interface UploadOptions {
  fields?: Record<string, string>;
  filename?: string;
  headers?: Record<string, string>;
  /** No file part at all. */
  noFile?: boolean;
}

/** POSTs a multipart form with the CSV as the `file` part. */
export async function postCsv(
  u: TestUser,
  path: string,
  data: Buffer | string,
  opts: UploadOptions = {},
): Promise<Res> {
  const form = new FormData();
  for (const [k, v] of Object.entries(opts.fields ?? {})) form.append(k, v);
  if (!opts.noFile) form.append('file', new Blob([data], { type: 'text/csv' }), opts.filename ?? 'leads.csv');
  const base = (await api()).base;
  return parse(
    await fetch(base + path, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${u.accessToken}`, ...opts.headers },
    }),
  );
}

export const previewPath = (appId: string) => `/api/apps/${appId}/lists/import-drafts/preview`;
export const importPath = (appId: string) => `/api/apps/${appId}/lists/import`;
export const draftPath = (appId: string, id: string) => `/api/apps/${appId}/lists/import-drafts/${id}`;

export const preview = (u: TestUser, appId: string, data: Buffer | string, opts?: UploadOptions) =>
  postCsv(u, previewPath(appId), data, opts);

export async function commit(u: TestUser, appId: string, id: string, body: Record<string, unknown>): Promise<Res> {
  return call('POST', `${draftPath(appId, id)}/commit`, { token: u.accessToken, body });
}

/** Polls the draft route until the import is final (or `until` holds). */
export async function waitImport(
  u: TestUser,
  appId: string,
  id: string,
  until: (b: any) => boolean = (b) => FINAL.includes(b.status),
  timeoutMs = 90_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call('GET', draftPath(appId, id), { token: u.accessToken });
    if (r.status !== 200) throw new Error(`GET draft: ${r.status} ${r.text}`);
    if (until(r.body)) return r.body;
    if (Date.now() > deadline)
      throw new Error(`import ${id} still ${r.body.status} after ${timeoutMs} ms: ${JSON.stringify(r.body.progress)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** A CSV of `n` people (header + rows), deterministic from `tag`. */
export function peopleCsv(
  n: number,
  tag: string,
  opts: { from?: number; eol?: string; delimiter?: string } = {},
): string {
  const d = opts.delimiter ?? ',';
  const eol = opts.eol ?? '\n';
  const lines = [['Email', 'LinkedIn URL', 'First Name', 'Last Name', 'Title', 'Company', 'Country'].join(d)];
  for (let i = opts.from ?? 0; i < (opts.from ?? 0) + n; i++) {
    lines.push(
      [
        `p${i}-${tag}@acme.example`,
        `https://pronet.example/in/p${i}-${tag}`,
        `First${i}`,
        `Last${i}`,
        'Head of Growth',
        `Acme ${i % 7}`,
        'France',
      ].join(d),
    );
  }
  return lines.join(eol) + eol;
}
