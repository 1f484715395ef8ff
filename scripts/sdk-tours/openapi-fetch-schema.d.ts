// A stand-in for openapi-typescript's output, for the project's own typecheck only: the tour beside it
// (openapi-fetch-tour.ts) is compiled and run by scripts/openapi-clients.ts next to the types generated
// from the document as served, which replace this file there. `any` here, because the real types come
// from the document of the moment and are checked only there.
export type paths = any;
export type components = any;
