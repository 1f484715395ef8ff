import test from 'ava';
import { checkTemplate, renderTemplate, requiredVariables } from '../../lib/templates.js';

test('renders variables and fallbacks; reports what had neither', (t) => {
  t.deepEqual(
    renderTemplate('Hi {{first_name}}, how is {{ company | your team }}?', { first_name: 'Ana', company: '' }),
    { text: 'Hi Ana, how is your team?', missing: [] },
  );
  t.deepEqual(renderTemplate('Hi {{first_name}} at {{company}}', { first_name: '  ' }), {
    text: 'Hi  at ',
    missing: ['first_name', 'company'],
  });
});

test('checks: unknown variables and stray braces are refused; required variables are those without a fallback', (t) => {
  t.deepEqual(checkTemplate('Hi {{first_name|there}}'), []);
  t.deepEqual(
    checkTemplate('Hi {{firstname}}').map((p) => p.code),
    ['unknown_variable'],
  );
  t.deepEqual(
    checkTemplate('Hi {{first_name}').map((p) => p.code),
    ['unbalanced_braces'],
  );
  t.deepEqual(
    checkTemplate('Hi {first_name}}').map((p) => p.code),
    ['unbalanced_braces'],
  );
  t.deepEqual(requiredVariables('{{first_name}} {{company|you}} {{title}} {{first_name}}'), ['first_name', 'title']);
});
