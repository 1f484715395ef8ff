import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { ListImport } from './ListImport.js';

// The uploaded file of an import, durably in PostgreSQL so that any worker can read it: chunk
// `seq` holds bytes [seq × chunk_bytes, (seq + 1) × chunk_bytes) (domain/lists/import-files.ts). Deleted
// with the import, and as soon as the import reaches a final state.
export const ImportFileChunk = defineEntity({
  name: 'ImportFileChunk',
  tableName: 'import_file_chunks',
  properties: (p) => ({
    listImport: p.manyToOne(ListImport).ref().primary().deleteRule('cascade'),
    seq: p.integer().primary(),
    data: p.blob(),
  }),
});
export type IImportFileChunk = InferEntity<typeof ImportFileChunk>;
