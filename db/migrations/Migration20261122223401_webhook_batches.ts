import { Migration } from '@mikro-orm/migrations';

// Batched webhook delivery (docs/webhooks.md): the outbox row records which workflow delivers it,
// committed before that workflow is started (workers/webhook-dispatcher.ts).
export class Migration20261122223401_webhook_batches extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_events" add column "batch_id" uuid null;`);
    this.addSql(`create index "webhook_events_batch_id_index" on "webhook_events" ("batch_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "webhook_events_batch_id_index";`);
    this.addSql(`alter table "webhook_events" drop column "batch_id";`);
  }
}
