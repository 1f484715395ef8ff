// The document's request examples are requests the service accepts: an integrator who copies one
// (or a generator that seeds an SDK's docs from it) must not get 400 invalid_body. Every operation's
// examples go through the router's own checks (requestRefusal: the path, the query, the JSON body,
// in the router's order and codes); those without a path id are also sent over HTTP.
import test from 'ava';
import { allOperations } from '../../api/operations.js';
import { buildOpenApi } from '../../api/openapi.js';
import { documentPath, pathParamNames } from '../../api/path-params.js';
import { requestRefusal } from '../../api/router.js';
import { api, closeApi, createPat, createUser } from '../helpers/api.js';
test.after.always(closeApi);

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  example?: unknown;
  $ref?: string;
}
interface DocOperation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { example?: unknown }> };
}

const doc = buildOpenApi(allOperations()) as { paths: Record<string, Record<string, DocOperation>> };

/** The request the examples make: public path parameter names mapped back to the declared ones. */
function exampleRequest(path: string, o: DocOperation) {
  const publicToDeclared = new Map([...pathParamNames(path)].map(([declared, pub]) => [pub, declared]));
  const params: Record<string, string> = {};
  const query = new URLSearchParams();
  for (const p of o.parameters ?? []) {
    if (p.$ref || p.example === undefined) continue;
    if (p.in === 'path') params[publicToDeclared.get(p.name) ?? p.name] = String(p.example);
    if (p.in === 'query')
      for (const v of Array.isArray(p.example) ? p.example : [p.example]) query.append(p.name, String(v));
  }
  const json = o.requestBody?.content['application/json'];
  return { params, querystring: query.toString(), body: json?.example, hasJson: !!json };
}

test('every operation’s request examples pass the router’s own checks (path, query, body)', (t) => {
  let checked = 0;
  const refused: string[] = [];
  for (const op of allOperations()) {
    const o = doc.paths[documentPath(op.path)][op.method.toLowerCase()];
    const refusal = requestRefusal(op, exampleRequest(op.path, o));
    if (refusal) refused.push(`${op.operationId}: ${refusal.status} ${refusal.code}: ${refusal.message}`);
    checked++;
  }
  t.deepEqual(refused, [], 'examples the operation’s own checks refuse');
  t.true(checked > 250, `${checked} operations`);
});

test('sent over HTTP, the examples of operations without a path id are not refused for their shape', async (t) => {
  t.timeout(5 * 60_000);
  const { base } = await api();
  const token = await createPat(await createUser('Examples'), 'examples');
  const shapeCodes = new Set(['invalid_body', 'invalid_query', 'invalid_id', 'invalid_header']);
  let sent = 0;
  const refused: string[] = [];
  for (const op of allOperations()) {
    if (op.path.includes('{') || op.produces || op.form) continue;
    // Sign-in operations would end the token's session or rotate it; logout too.
    if (op.path.startsWith('/api/auth/')) continue;
    const o = doc.paths[documentPath(op.path)][op.method.toLowerCase()];
    const { querystring, body, hasJson } = exampleRequest(op.path, o);
    const res = await fetch(`${base}${op.path}${querystring ? `?${querystring}` : ''}`, {
      method: op.method,
      headers: {
        ...(op.auth === 'public' ? {} : { authorization: `Bearer ${token}` }),
        ...(hasJson ? { 'content-type': 'application/json' } : {}),
      },
      body: hasJson ? JSON.stringify(body) : undefined,
      redirect: 'manual',
    });
    const text = await res.text();
    let code: string | undefined;
    try {
      code = (JSON.parse(text) as { error?: Json }).error?.code as string | undefined;
    } catch {
      // not JSON (a page, a file): not a shape refusal
    }
    if (res.status === 400 && code && shapeCodes.has(code)) refused.push(`${op.operationId}: ${text.slice(0, 300)}`);
    sent++;
  }
  t.deepEqual(refused, [], 'examples refused for their shape');
  t.true(sent > 40, `${sent} sent`);
});
