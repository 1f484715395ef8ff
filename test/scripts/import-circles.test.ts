// The Temporal side has no import circle (docs/architecture.md): no file of jobs/, workflows/,
// activities/ or the domain's Jobs port (domain/jobs.ts) sits in a circle of imports, type imports
// included. Read from the source as text (every `from '…'` of a relative module), then Tarjan's
// strongly connected components.
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { repoRoot } from '../../lib/config.js';

const ROOTS = ['api', 'activities', 'db', 'domain', 'jobs', 'lib', 'workers', 'workflows'];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function graph(): Map<string, string[]> {
  const all = ROOTS.flatMap((r) => files(join(repoRoot, r)));
  const known = new Set(all);
  const edges = new Map<string, string[]>();
  for (const file of all) {
    const out: string[] = [];
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'/g)) {
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
      if (known.has(target)) out.push(target);
    }
    edges.set(file, out);
  }
  return edges;
}

/** The strongly connected components of more than one file (the circles). */
function circles(edges: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      for (let w = ''; w !== v;) {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      }
      if (scc.length > 1) out.push(scc);
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return out;
}

test('no file of jobs/, workflows/, activities/ or domain/jobs.ts is in an import circle (type imports counted)', (t) => {
  const temporalSide = (f: string) => /^(jobs|workflows|activities)\//.test(f) || f === 'domain/jobs.ts';
  const found = circles(graph()).map((scc) => scc.map((f) => relative(repoRoot, f)).sort());
  t.log(`${found.length} circles elsewhere: ${found.map((c) => c.join(' ↔ ')).join('; ') || 'none'}`);
  t.deepEqual(
    found.filter((scc) => scc.some(temporalSide)),
    [],
  );
});
