// The one error type domain code raises. `code` is the spec's error code; the error middleware
// turns it into `{"error":{"code","message"}}` with `status`.
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** Response headers that belong to this error (e.g. `Retry-After` on 429). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const notFound = (what = 'resource') => new AppError(404, 'not_found', `${what} not found`);
export const unauthorized = (message = 'authentication required') => new AppError(401, 'unauthorized', message);
export const forbidden = (code: string, message: string) => new AppError(403, code, message);
export const badRequest = (code: string, message: string, details?: unknown) =>
  new AppError(400, code, message, details);
export const conflict = (code: string, message: string) => new AppError(409, code, message);
