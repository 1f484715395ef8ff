import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { ListImport } from './ListImport.js';

// A row of an import's file that was not imported: its row number (the header is row 1), why
// (`[{code, field, message}]`), and its values as read (each cut to 1,000 characters), so the
// rows can be fixed and imported again. Written with the chunk it belongs to; (import, row) is
// the key, so a chunk can never record a row twice.
export const ListImportProblem = defineEntity({
  name: 'ListImportProblem',
  tableName: 'list_import_problems',
  properties: (p) => ({
    listImport: p.manyToOne(ListImport).ref().primary().deleteRule('cascade'),
    row: p.integer().primary(),
    reasons: p.json<unknown>(),
    values: p.json<string[]>(),
  }),
});
export type IListImportProblem = InferEntity<typeof ListImportProblem>;
