import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { ContactExport } from './ContactExport.js';

// One piece of an export's CSV file, in order of `seq` (0 is the header): durable, readable by every
// API process, streamed back one by one. Written and read with SQL (domain/contacts/exports.ts).
export const ExportFileChunk = defineEntity({
  name: 'ExportFileChunk',
  tableName: 'export_file_chunks',
  properties: (p) => ({
    export: p.manyToOne(ContactExport).ref().deleteRule('cascade').primary(),
    seq: p.integer().primary(),
    data: p.blob(),
  }),
});
export type IExportFileChunk = InferEntity<typeof ExportFileChunk>;
