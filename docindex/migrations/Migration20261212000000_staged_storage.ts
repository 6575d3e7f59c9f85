import { Migration } from '@mikro-orm/migrations';

/**
 * A staged file's snippets and keyword vectors are kept out of line but not compressed (`storage external`): a
 * staged row lives from its file's parse to the swap, minutes at most, and PostgreSQL's compression of each row's
 * snippets as it was written, and of its vectors as they were filled, was CPU on a first index's critical path for
 * space nobody needs (bench/README.md, "Index"). Only rows written from now on are stored so.
 */
export class Migration20261212000000_staged_storage extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table staged_document alter column snippets set storage external, alter column vectors set storage external;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table staged_document alter column snippets set storage extended, alter column vectors set storage extended;`);
  }
}
