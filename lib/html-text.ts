// Readable text from a web page, for the model: html-to-text (maintained, on htmlparser2) rather
// than regexes, so entities, block structure and script/style content are handled as browsers do.
import { TextDecoder } from 'node:util';
import { convert } from 'html-to-text';

const SKIP = [
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'iframe',
  'img',
  'picture',
  'video',
  'audio',
  'form',
  'button',
  'nav',
];
const KEEP_CASE = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } }));

const BODY_OPTIONS = {
  wordwrap: false as const,
  selectors: [
    ...SKIP.map((selector) => ({ selector, format: 'skip' })),
    ...KEEP_CASE,
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
  ],
};
const TITLE_OPTIONS = { wordwrap: false as const, baseElements: { selectors: ['title'], returnDomByDefault: false } };

/** Collapses runs of blank lines and trailing spaces the conversion leaves. */
const tidy = (s: string) =>
  s
    .replace(/[ \t\u00a0]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();

export function htmlToText(html: string): { title: string | null; text: string } {
  const title = tidy(convert(html, TITLE_OPTIONS)).replace(/\s+/g, ' ');
  return { title: title || null, text: tidy(convert(html, BODY_OPTIONS)) };
}

/** The charset a Content-Type names, if TextDecoder knows it; UTF-8 otherwise. */
export function decodeBody(body: Buffer, contentType: string | null): string {
  const label = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label ?? 'utf-8');
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return decoder.decode(body);
}
