// Text out of PDF files, for Operator attachments (docs/operator-attachments.md). The extractor is
// `unpdf` (a serverless build of Mozilla's PDF.js, pure JavaScript, no native parts), loaded on
// first use. It reads only the bytes it is given: no fonts, character maps or anything else are
// fetched (no URLs are configured), and font programs are never compiled with eval.
//
// The loader is a seam: `Services.pdf` is `loadPdfExtractor` unless a test gives one that fails,
// which is how "the extractor cannot be loaded" (422 pdf_extraction_unavailable) is provoked.

export interface PdfLimits {
  /** Pages read at most (later pages are ignored). */
  maxPages: number;
  /** Characters kept at most; reading stops once they are reached. */
  maxChars: number;
  /** Wall-clock budget for the whole document, ms. */
  timeoutMs: number;
}

export interface PdfText {
  text: string;
  /** Pages in the document. */
  pages: number;
  /** True when pages, characters or time ran out before the end of the document. */
  truncated: boolean;
}

/** The document cannot be read: corrupt, not a PDF after all, encrypted, or too slow to read. */
export class PdfUnreadableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PdfUnreadableError';
  }
}

export interface PdfTextExtractor {
  /** Resolves with the text (possibly empty: a scanned document); rejects with PdfUnreadableError. */
  extract(bytes: Uint8Array, limits: PdfLimits): Promise<PdfText>;
}

/** Loads the extractor; rejects when it cannot be loaded at all. */
export type PdfExtractorLoader = () => Promise<PdfTextExtractor>;

interface TextItemLike {
  str?: string;
  hasEOL?: boolean;
}

let loaded: Promise<PdfTextExtractor> | undefined;

/** The unpdf-based extractor (the module is imported once, on the first PDF). */
export const loadPdfExtractor: PdfExtractorLoader = () => {
  loaded ??= import('unpdf').then(({ getDocumentProxy }) => ({
    async extract(bytes: Uint8Array, limits: PdfLimits): Promise<PdfText> {
      let timer: NodeJS.Timeout | undefined;
      let pdf: Awaited<ReturnType<typeof getDocumentProxy>> | undefined;
      let timedOut = false;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          reject(new PdfUnreadableError(`the PDF could not be read within ${limits.timeoutMs} ms`));
        }, limits.timeoutMs);
      });
      const read = async (): Promise<PdfText> => {
        try {
          // A copy: PDF.js may take over (detach) the buffer it is given.
          pdf = await getDocumentProxy(new Uint8Array(bytes), {
            isEvalSupported: false,
            disableFontFace: true,
            useSystemFonts: false,
            stopAtErrors: false,
            verbosity: 0,
          });
        } catch (err) {
          throw new PdfUnreadableError(`the PDF could not be opened: ${(err as Error)?.message ?? String(err)}`, {
            cause: err,
          });
        }
        if (timedOut) {
          await pdf.destroy().catch(() => {});
          throw new PdfUnreadableError(`the PDF could not be read within ${limits.timeoutMs} ms`);
        }
        const pages = pdf.numPages;
        const parts: string[] = [];
        let chars = 0;
        let truncated = pages > limits.maxPages;
        for (let n = 1; n <= Math.min(pages, limits.maxPages) && !timedOut; n++) {
          let items: TextItemLike[];
          try {
            const page = await pdf.getPage(n);
            items = (await page.getTextContent()).items as TextItemLike[];
            page.cleanup();
          } catch (err) {
            throw new PdfUnreadableError(
              `page ${n} of the PDF could not be read: ${(err as Error)?.message ?? String(err)}`,
              { cause: err },
            );
          }
          const text = items.map((i) => (i.str ?? '') + (i.hasEOL ? '\n' : '')).join('');
          parts.push(text);
          chars += text.length;
          if (chars >= limits.maxChars) {
            truncated = truncated || n < pages || chars > limits.maxChars;
            break;
          }
        }
        return { text: parts.join('\n\n'), pages, truncated };
      };
      try {
        return await Promise.race([read(), deadline]);
      } finally {
        clearTimeout(timer);
        // Ends PDF.js' in-process worker for this document (also stops a read that ran out of time).
        await (pdf as { destroy?: () => Promise<void> } | undefined)?.destroy?.().catch(() => {});
      }
    },
  }));
  // A failed import is not remembered: the next upload tries again.
  return loaded.catch((err) => {
    loaded = undefined;
    throw err;
  });
};
