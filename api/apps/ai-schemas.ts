// Request and response schemas of the products' AI operations (domain/apps/ai.ts).
import { z } from 'zod';
import { MAX_TEXT_CHARS } from '../../domain/apps/ai.js';
import { text, urlPattern } from '../schemas.js';

const appId = z.uuid().optional().meta({
  description:
    'Attribute the model calls to this product: they are listed by its specialist routes (404/403 as for the product itself).',
});

export const AnalyzeTextBody = z
  .object({
    text: text({ min: 1, max: MAX_TEXT_CHARS, trim: true }).meta({
      description: 'What the product is: a description, a landing page’s copy, notes.',
    }),
    name: text({ max: 200, trim: true })
      .optional()
      .meta({ description: 'The product’s name, when known (kept as given).' }),
    app_id: appId,
  })
  .strict();

// Destinations are checked by the guarded client (400 invalid_url, blocked_destination); the
// document states the rule, and assertDocumentedUrl refuses what the pattern excludes.
export const AnalyzeUrlBody = z
  .object({
    url: z
      .string()
      .max(2048)
      .meta({
        pattern: urlPattern('https'),
        description:
          'An https URL with a public DNS host name (400 invalid_url or blocked_destination otherwise; hosts in the deployment setting OUTBOUND_ALLOW_HOSTS may also use http and private addresses). Redirects are followed up to 3 times, each checked the same way.',
      }),
    app_id: appId,
  })
  .strict();

const Terms = z.array(text({ min: 1, max: 100 })).max(50);
/** Every key present (possibly empty), within the limits of PUT /api/apps/{id}. */
export const SuggestedFilters = z.object({
  titles: Terms,
  seniorities: Terms,
  industries: Terms,
  countries: Terms,
  company_sizes: Terms,
  keywords: Terms,
});

export const IcpSuggestionView = z.object({
  icp_description: z.string().nullable(),
  icp_filters: SuggestedFilters,
});

export const ProductSuggestionView = z.object({
  name: z.string().nullable(),
  description: z.string().nullable(),
  value_proposition: z.string().nullable(),
  icp_description: z.string().nullable(),
  icp_filters: SuggestedFilters,
});

export const PageSuggestionView = ProductSuggestionView.extend({
  source: z.object({
    url: z.string().meta({ description: 'The URL that answered, after redirects.' }),
    title: z.string().nullable(),
    chars: z.int().nonnegative().meta({ description: 'Characters of page text sent to the model (at most 20,000).' }),
    truncated: z
      .boolean()
      .meta({ description: 'The page was over 2 MiB or its text over 20,000 characters; the beginning was used.' }),
  }),
});
