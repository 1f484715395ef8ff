// Message templates of campaign steps: `{{first_name}}` is replaced by the lead's value, and
// `{{first_name|there}}` falls back to "there" when the value is empty. Only the variables below
// exist; anything else is refused when the step is saved, so a typo never reaches a lead.

// `unsubscribe_url`: the recipient's signed one-click unsubscribe link (docs/email.md "Unsubscribe").
export const TEMPLATE_VARIABLES = [
  'first_name',
  'last_name',
  'full_name',
  'company',
  'title',
  'country',
  'email',
  'sender_name',
  'unsubscribe_url',
] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
export type TemplateValues = Partial<Record<TemplateVariable, string | null | undefined>>;

const PLACEHOLDER = /\{\{\s*([^{}|]*?)\s*(?:\|([^{}]*))?\}\}/g;

export interface TemplateProblem {
  code: 'unknown_variable' | 'unbalanced_braces';
  message: string;
}

/** What is wrong with a template (empty when it can be saved). */
export function checkTemplate(template: string): TemplateProblem[] {
  const problems: TemplateProblem[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    const name = m[1];
    if (!(TEMPLATE_VARIABLES as readonly string[]).includes(name)) {
      problems.push({
        code: 'unknown_variable',
        message: `{{${name}}} is not a variable; variables: ${TEMPLATE_VARIABLES.join(', ')}`,
      });
    }
  }
  // Braces left after removing the placeholders are a placeholder typed wrong ("{{first_name}", "{first_name}}").
  const rest = template.replace(PLACEHOLDER, '');
  if (/\{\{|\}\}/.test(rest))
    problems.push({ code: 'unbalanced_braces', message: 'a "{{" or "}}" does not form a {{variable}} placeholder' });
  return problems;
}

/** The variables a template uses without a fallback (those that must have a value for every lead). */
export function requiredVariables(template: string): TemplateVariable[] {
  const out = new Set<TemplateVariable>();
  for (const m of template.matchAll(PLACEHOLDER))
    if (m[2] === undefined && (TEMPLATE_VARIABLES as readonly string[]).includes(m[1]))
      out.add(m[1] as TemplateVariable);
  return [...out];
}

/**
 * Renders the template. Returns the text and the variables that had neither a value nor a fallback
 * (rendered as empty): the executor refuses to send such a message.
 */
export function renderTemplate(
  template: string,
  values: TemplateValues,
): { text: string; missing: TemplateVariable[] } {
  const missing = new Set<TemplateVariable>();
  const text = template.replace(PLACEHOLDER, (_, name: string, fallback: string | undefined) => {
    const value = values[name as TemplateVariable]?.trim();
    if (value) return value;
    if (fallback !== undefined) return fallback.trim();
    missing.add(name as TemplateVariable);
    return '';
  });
  return { text, missing: [...missing] };
}
