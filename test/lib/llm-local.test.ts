// The local model: deterministic, input-dependent, and always within the caller's schema.
import test from 'ava';
import { z } from 'zod';
import {
  analyzeProduct,
  collectStream,
  generateKeywords,
  generateQueries,
  IcpProposal,
  KeywordsResult,
  LlmError,
  LocalModelAdapter,
  ProductProfile,
  Qualification,
  qualifyCandidate,
  proposeIcp,
  QueriesResult,
  type ToolSpec,
} from '../../lib/llm/index.js';

const llm = new LocalModelAdapter();

const SALES_TEXT =
  'Leadhound finds B2B SaaS buyers on forums and the professional network. It helps sales teams at startups in Germany and the UK ' +
  'automate outbound prospecting: cold email sequences, LinkedIn outreach and lead scoring, without hiring more SDRs.';
const CLINIC_TEXT =
  'CarePlan is scheduling software for dental clinics and physiotherapy practices. Patients book appointments online, clinics cut ' +
  'no-shows with SMS reminders, and practice managers see utilisation per therapist. Built for healthcare groups in France and Spain.';

const ICP = {
  titles: ['VP of Sales', 'Head of Sales'],
  seniorities: ['VP', 'head'],
  industries: ['SaaS'],
  countries: ['Germany', 'AT'],
  company_sizes: ['11-50', '51-200'],
  keywords: ['outbound', 'cold email'],
};
const FIT = {
  name: 'Ada',
  title: 'Vice President of Sales',
  company: 'Acme',
  industry: 'Computer Software',
  country: 'Berlin, Germany',
  company_size: 120,
  headline: 'Scaling outbound at Acme',
  text: 'Our cold email reply rates dropped after we changed domains.',
};
const MISFIT = {
  name: 'Bo',
  title: 'Backend Engineer',
  industry: 'Hospital & Health Care',
  country: 'France',
  company_size: '1001-5000',
  headline: 'Rust and Postgres',
};

test('same input, same output: every task is deterministic', async (t) => {
  for (let i = 0; i < 2; i++) {
    t.deepEqual(await generateKeywords(llm, { text: SALES_TEXT }), await generateKeywords(llm, { text: SALES_TEXT }));
    t.deepEqual(await proposeIcp(llm, { text: SALES_TEXT }), await proposeIcp(llm, { text: SALES_TEXT }));
    t.deepEqual(await analyzeProduct(llm, { text: SALES_TEXT }), await analyzeProduct(llm, { text: SALES_TEXT }));
    // A fresh ICP object each time (no cache hit) gives the same answer as the cached one.
    t.deepEqual(
      await qualifyCandidate(llm, { icp: { ...ICP }, candidate: FIT }),
      await qualifyCandidate(llm, { icp: ICP, candidate: FIT }),
    );
    const msgs = [{ role: 'user' as const, content: 'tell me about cold email' }];
    t.deepEqual(
      await collectStream(llm.stream({ messages: msgs })),
      await collectStream(llm.stream({ messages: msgs })),
    );
  }
});

test('keywords come from the text: salient phrases first, stop words out, a different text gives different keywords', async (t) => {
  const sales = (await generateKeywords(llm, { text: SALES_TEXT })).value.keywords;
  const clinic = (await generateKeywords(llm, { text: CLINIC_TEXT })).value.keywords;
  t.true(sales.includes('b2b saas'));
  t.true(sales.includes('outbound prospecting'));
  t.true(sales.includes('cold email'));
  t.true(clinic.includes('dental clinics'));
  t.true(clinic.includes('scheduling software'));
  for (const k of [...sales, ...clinic]) t.false(/^(the|and|for|with|it|more)$/.test(k), `stop word ${k}`);
  t.deepEqual(
    sales.filter((k) => clinic.includes(k)),
    [],
  );
  t.true(sales.length <= 12);
  t.is((await generateKeywords(llm, { text: SALES_TEXT, max: 3 })).value.keywords.length, 3);
  // A word repeated throughout outranks phrases that occur once.
  const repeated = (
    await generateKeywords(llm, {
      text: 'Invoices. Invoices for freelancers. Paid invoices, overdue invoices, invoice reminders.',
    })
  ).value.keywords;
  t.is(repeated[0], 'invoices');
});

test('qualify: a candidate matching the ICP scores higher, with reasons naming the fields that matched or failed', async (t) => {
  const fit = (await qualifyCandidate(llm, { icp: ICP, candidate: FIT })).value;
  const misfit = (await qualifyCandidate(llm, { icp: ICP, candidate: MISFIT })).value;
  t.is(fit.score, 100);
  t.is(fit.verdict, 'qualified');
  t.is(misfit.score, 0);
  t.is(misfit.verdict, 'rejected');
  const fields = (q: Qualification) => Object.fromEntries(q.reasons.map((r) => [r.field, r.matched]));
  t.deepEqual(fields(fit), {
    title: true,
    seniority: true,
    industry: true,
    country: true,
    company_size: true,
    keywords: true,
  });
  t.deepEqual(fields(misfit), {
    title: false,
    seniority: false,
    industry: false,
    country: false,
    company_size: false,
    keywords: false,
  });
  t.regex(fit.reasons.find((r) => r.field === 'title')!.detail, /Vice President of Sales.*VP of Sales/);
  t.regex(fit.reasons.find((r) => r.field === 'keywords')!.detail, /"outbound", "cold email" found in headline, text/);
  t.regex(misfit.reasons.find((r) => r.field === 'country')!.detail, /France is not wanted/);

  // Partial fits land in between, and the threshold decides the verdict.
  const partial = { ...FIT, country: 'France', company_size: 5000 }; // loses country (15) and size (10) of 115
  const p = (await qualifyCandidate(llm, { icp: ICP, candidate: partial })).value;
  t.is(p.score, Math.round((100 * 90) / 115));
  t.is(p.verdict, 'qualified');
  t.is((await qualifyCandidate(llm, { icp: ICP, candidate: partial, threshold: 90 })).value.verdict, 'rejected');
  const manager = (
    await qualifyCandidate(llm, { icp: { titles: ['Head of Sales'] }, candidate: { title: 'Sales Manager' } })
  ).value;
  t.is(manager.score, 50);
  t.regex(manager.reasons[0].detail, /partly matches/);
});

test('qualify: only the criteria the ICP names count; a description stands in for keywords; exclusions reject', async (t) => {
  const onlyCountry = (
    await qualifyCandidate(llm, {
      icp: { countries: ['United States'] },
      candidate: { country: 'USA', title: 'Nobody' },
    })
  ).value;
  t.is(onlyCountry.score, 100);
  t.deepEqual(
    onlyCountry.reasons.map((r) => r.field),
    ['country'],
  );

  const described = { description: 'Agencies that run cold email campaigns for B2B clients' };
  const yes = (
    await qualifyCandidate(llm, { icp: described, candidate: { headline: 'Founder of a cold email agency' } })
  ).value;
  const no = (await qualifyCandidate(llm, { icp: described, candidate: { headline: 'Pastry chef' } })).value;
  t.true(yes.score > no.score);
  t.regex(yes.reasons[0].detail, /ICP description terms/);

  const excluded = (
    await qualifyCandidate(llm, {
      icp: { ...ICP, exclude_keywords: ['recruiter'] },
      candidate: { ...FIT, headline: 'Recruiter, ex-sales' },
    })
  ).value;
  t.is(excluded.score, 0);
  t.is(excluded.reasons.at(-1)!.field, 'exclude_keywords');

  const empty = (await qualifyCandidate(llm, { icp: {}, candidate: FIT })).value;
  t.is(empty.score, 50);
  t.is(empty.reasons[0].field, 'icp');

  // Seniority is inferred from the title when the candidate has none; sizes compare as ranges.
  const inferred = (
    await qualifyCandidate(llm, {
      icp: { seniorities: ['C-Level'], company_sizes: ['10001+'] },
      candidate: { title: 'Chief Technology Officer', company_size: '5001-10,000' },
    })
  ).value;
  t.deepEqual(
    inferred.reasons.map((r) => [r.field, r.matched]),
    [
      ['seniority', true],
      ['company_size', false],
    ],
  );
});

test('icp and product_profile follow the product text', async (t) => {
  const sales = (await proposeIcp(llm, { text: SALES_TEXT })).value;
  const clinic = (await proposeIcp(llm, { text: CLINIC_TEXT })).value;
  t.true(sales.filters.titles.includes('VP of Sales'));
  t.deepEqual(sales.filters.countries, ['United Kingdom', 'Germany']);
  t.deepEqual(sales.filters.company_sizes, ['1-10', '11-50']);
  t.true(clinic.filters.industries.includes('Healthcare'));
  t.deepEqual(clinic.filters.countries, ['France', 'Spain']);
  t.notDeepEqual(sales.filters.titles, clinic.filters.titles);
  t.regex(sales.description, /VP of Sales/);

  const profile = (await analyzeProduct(llm, { text: SALES_TEXT })).value;
  t.is(profile.name, 'Leadhound');
  t.regex(profile.value_proposition, /helps sales teams/);
  t.is(profile.icp_guess, sales.description);
  t.is((await analyzeProduct(llm, { text: CLINIC_TEXT, name: 'CarePlan Pro' })).value.name, 'CarePlan Pro');
});

test('queries are built from the keywords given', async (t) => {
  const q = (await generateQueries(llm, { keywords: ['cold email', 'lead scoring'], forum: 'newsforum' })).value
    .queries;
  t.deepEqual(q.slice(0, 4), ['"cold email"', '"lead scoring"', 'looking for cold email', 'looking for lead scoring']);
  t.is(new Set(q).size, q.length);
  t.is((await generateQueries(llm, { keywords: ['a', 'b', 'c', 'd'], max: 5 })).value.queries.length, 5);
});

test('every answer satisfies the schema of its task; a caller schema that does not fit is unsupported_task', async (t) => {
  t.true(KeywordsResult.safeParse((await generateKeywords(llm, { text: '' })).value).success);
  t.true(IcpProposal.safeParse((await proposeIcp(llm, { text: '' })).value).success);
  t.true(ProductProfile.safeParse((await analyzeProduct(llm, { text: '' })).value).success);
  t.true(QueriesResult.safeParse((await generateQueries(llm, { keywords: [] })).value).success);
  // A caller may ask for a subset of the answer: extra keys are stripped by its schema.
  const scoreOnly = await llm.structured({
    task: 'qualify',
    input: { icp: ICP, candidate: FIT },
    schema: z.object({ score: z.number() }),
  });
  t.deepEqual(scoreOnly.value, { score: 100 });
  const wrong = await t.throwsAsync(
    llm.structured({ task: 'keywords', input: 'x', schema: z.object({ terms: z.array(z.string()) }) }),
    { instanceOf: LlmError },
  );
  t.is(wrong.code, 'unsupported_task');
  const bad = await t.throwsAsync(llm.structured({ task: 'qualify', input: 'not an object', schema: Qualification }), {
    instanceOf: LlmError,
  });
  t.is(bad.code, 'bad_request');
});

test('an unknown task gets the smallest value its schema accepts', async (t) => {
  const schema = z.object({
    title: z.string().min(3),
    tags: z.array(z.enum(['a', 'b'])).min(1),
    count: z.number().int().min(2),
    note: z.string().nullable(),
    flag: z.boolean(),
    maybe: z.string().optional(),
  });
  const r = await llm.structured({ task: 'summarise_thread', input: 'whatever', schema });
  t.deepEqual(r.value, { title: 'xxx', tags: ['a'], count: 2, note: null, flag: false });
  t.true(r.usage.inputTokens > 0);
  t.is(r.usage.costMicros, 0);
  const e = await t.throwsAsync(llm.structured({ task: 'other', input: 'x', schema: z.string().email() }), {
    instanceOf: LlmError,
  });
  t.is(e.code, 'unsupported_task');
});

const TOOLS: ToolSpec[] = [
  {
    name: 'list_agents',
    description: 'List the discovery agents of a product',
    parameters: { type: 'object', properties: { app_id: { type: 'string' }, limit: { type: 'integer' } } },
  },
  {
    name: 'launch_run',
    description: 'Launch a discovery run for an agent now',
    parameters: { type: 'object', properties: { agent_id: { type: 'string' } }, required: ['agent_id'] },
  },
];

test('chat: a reply in several deltas; a tool call when the message clearly asks for a tool; a summary after the tool result', async (t) => {
  const plain = await collectStream(
    llm.stream({ messages: [{ role: 'user', content: 'How do I improve cold email deliverability?' }], tools: TOOLS }),
  );
  t.deepEqual(plain.toolCalls, []);
  t.regex(plain.text, /cold email/);
  t.regex(plain.text, /list_agents/);
  t.is(plain.finishReason, 'stop');
  t.true(plain.usage.inputTokens > 0 && plain.usage.outputTokens > 0);
  const deltas = [];
  for await (const e of llm.stream({
    messages: [{ role: 'user', content: 'How do I improve cold email deliverability?' }],
  }))
    if (e.type === 'text') deltas.push(e);
  t.true(deltas.length > 1);

  const agent = '0190c0de-0000-7000-8000-00000000000a';
  const asked = await collectStream(
    llm.stream({ messages: [{ role: 'user', content: `please launch a run for agent ${agent}` }], tools: TOOLS }),
  );
  t.deepEqual(asked.toolCalls, [{ id: 'call_local_1', name: 'launch_run', args: { agent_id: agent } }]);
  t.is(asked.finishReason, 'tool_calls');
  const listed = await collectStream(
    llm.stream({ messages: [{ role: 'user', content: 'list agents, limit=5' }], tools: TOOLS }),
  );
  t.deepEqual(
    listed.toolCalls.map((c) => [c.name, c.args]),
    [['list_agents', { limit: 5 }]],
  );

  const after = await collectStream(
    llm.stream({
      messages: [
        { role: 'user', content: `launch a run for agent ${agent}` },
        { role: 'assistant', content: null, toolCalls: asked.toolCalls },
        { role: 'tool', toolCallId: 'call_local_1', content: '{"run_id":"r1","status":"running"}' },
      ],
      tools: TOOLS,
    }),
  );
  t.deepEqual(after.toolCalls, []);
  t.regex(after.text, /launch_run returned: \{"run_id":"r1"/);

  const none = await collectStream(llm.stream({ messages: [{ role: 'user', content: 'launch a run' }] }));
  t.deepEqual(none.toolCalls, [], 'no tool is called when none is offered');
});

test('an aborted signal stops a local call too', async (t) => {
  const ac = new AbortController();
  ac.abort();
  const e = await t.throwsAsync(
    llm.structured({ task: 'keywords', input: 'x', schema: KeywordsResult, signal: ac.signal }),
    { instanceOf: LlmError },
  );
  t.is(e.code, 'aborted');
});
