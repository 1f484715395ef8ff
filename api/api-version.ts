// The API's version: a date, as the contract versions it, sent on every answer as `API-Version` and
// kept in the OpenAPI document as `x-api-version`. The document's `info.version` is the same date as a
// package-valid version (`2026.9.19`: PEP 440 and semver alike), which SDK generators use as the
// generated package's version.
export const API_VERSION = '2026-09-19';
export const API_VERSION_HEADER = 'API-Version';
/** `2026-09-19` → `2026.9.19`. */
export const PACKAGE_VERSION = API_VERSION.split('-')
  .map((part) => String(Number(part)))
  .join('.');
