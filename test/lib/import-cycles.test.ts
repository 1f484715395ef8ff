// No import cycles among the run-time modules (docs/architecture.md): a cycle is how two slices end up
// one, and under ESM it can hand a module an uninitialised binding. `import type` does not count: it
// is erased. Tarjan's strongly connected components over the static `import … from './…'` graph.
import test from 'ava';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { repoRoot } from '../../lib/config.js';

const LAYERS = ['api', 'domain', 'db', 'jobs', 'workflows', 'activities', 'workers', 'lib'];
const VALUE_IMPORT = /^(?:import|export)\s+(?!type\b)[^'"]*?from\s+['"](\.[^'"]+)['"]/gm;

function graph(): Map<string, string[]> {
  const walk = (d: string): string[] =>
    readdirSync(join(repoRoot, d)).flatMap((n) =>
      statSync(join(repoRoot, d, n)).isDirectory() ? walk(posix.join(d, n)) : [posix.join(d, n)],
    );
  const g = new Map<string, string[]>();
  for (const f of LAYERS.flatMap(walk).filter((f) => f.endsWith('.ts'))) {
    const src = readFileSync(join(repoRoot, f), 'utf8');
    const to = [...src.matchAll(VALUE_IMPORT)]
      .map((m) => posix.normalize(posix.join(posix.dirname(f), m[1])).replace(/\.js$/, '.ts'))
      .filter((t) => existsSync(join(repoRoot, t)));
    g.set(f, to);
  }
  return g;
}

function cycles(g: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of g.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const v of g.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('the detector finds a planted cycle', (t) => {
  t.deepEqual(
    cycles(
      new Map([
        ['a.ts', ['b.ts']],
        ['b.ts', ['c.ts']],
        ['c.ts', ['a.ts']],
        ['d.ts', ['a.ts']],
      ]),
    ),
    [['a.ts', 'b.ts', 'c.ts']],
  );
});

test('no import cycle among the run-time modules', (t) => {
  const g = graph();
  t.true(g.size > 300, `read ${g.size} modules`);
  t.deepEqual(cycles(g), []);
});
