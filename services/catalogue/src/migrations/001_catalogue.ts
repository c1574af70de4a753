import type { Knex } from "knex";
import type { Migration } from "@analytics/db";

/** Columns every table starts with: its id, creation order for stable paging, and the owner. */
function owned(t: Knex.CreateTableBuilder, db: Knex) {
  t.uuid("id").primary();
  t.bigIncrements("seq", { primaryKey: false });
  t.uuid("account_id").notNullable();
  t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
}

export const createCatalogue: Migration = {
  name: "001_catalogue",
  async up(db) {
    // Brands and categories are created by product writes and matched by name case-insensitively.
    await db.schema.createTable("brands", (t) => {
      owned(t, db);
      t.text("name").notNullable();
      t.specificType("synonyms", "text[]").notNullable().defaultTo("{}");
    });
    await db.raw("CREATE UNIQUE INDEX brands_account_name ON brands (account_id, lower(name))");
    await db.raw("CREATE INDEX brands_account_seq ON brands (account_id, seq)");

    await db.schema.createTable("categories", (t) => {
      owned(t, db);
      t.text("name").notNullable();
    });
    await db.raw("CREATE UNIQUE INDEX categories_account_name ON categories (account_id, lower(name))");
    await db.raw("CREATE INDEX categories_account_seq ON categories (account_id, seq)");

    // One row per SKU; column names are the proto field names of catalogue.v1.Product.
    await db.schema.createTable("products", (t) => {
      owned(t, db);
      t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.text("key").notNullable();
      for (const c of ["sku", "vendor_sku", "ean", "product_name", "variant_name", "season"]) t.text(c);
      t.smallint("status").notNullable().defaultTo(2);
      t.integer("year");
      for (const c of ["department", "gender", "age_group", "collection", "color", "size"]) t.text(c);
      t.uuid("brand_id").references("id").inTable("brands");
      t.uuid("category_id").references("id").inTable("categories");
      for (const c of ["sub_category", "product_type", "merchandise_type", "supplier"]) t.text(c);
      t.integer("moq");
      for (let n = 1; n <= 10; n++) t.text(`pim_custom${n}`);
      for (const c of ["product_group_id", "variant_group_id", "image_url"]) t.text(c);
      t.date("start_date");
      t.date("end_date");
      t.integer("production_lead_time_days");
      t.integer("shipping_lead_time_days");
      t.boolean("active_planning").notNullable().defaultTo(true);
      t.decimal("cost_calculation_price", null);
      t.jsonb("cost_calculation_values").notNullable().defaultTo("[]");
      t.jsonb("external_attributes").notNullable().defaultTo("{}");
      t.unique(["account_id", "key"]);
    });
    await db.raw("ALTER TABLE products ADD CONSTRAINT products_status CHECK (status BETWEEN 1 AND 7)");
    for (const c of ["seq", "sku", "ean", "season", "product_group_id", "variant_group_id"]) {
      await db.raw(`CREATE INDEX products_account_${c} ON products (account_id, ${c})`);
    }

    // Old keys after a key switch; a synonym is never anybody's current key.
    await db.schema.createTable("sku_synonyms", (t) => {
      t.uuid("account_id").notNullable();
      t.text("synonym").notNullable();
      t.uuid("product_id").notNullable().references("id").inTable("products").onDelete("CASCADE");
      t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.primary(["account_id", "synonym"]);
      t.index(["product_id"]);
    });

    // Content-addressed: the same bytes uploaded twice are stored once per account.
    await db.schema.createTable("images", (t) => {
      t.uuid("account_id").notNullable();
      t.text("sha256").notNullable();
      t.text("content_type").notNullable();
      t.binary("bytes").notNullable();
      t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.primary(["account_id", "sha256"]);
    });

    await db.schema.createTable("mapping_tables", (t) => {
      t.bigIncrements("seq", { primaryKey: false });
      t.uuid("account_id").notNullable();
      t.text("mapping_type").notNullable();
      t.text("mapping_field").notNullable();
      t.jsonb("mapping_values").notNullable();
      t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.primary(["account_id", "mapping_type", "mapping_field"]);
    });
  },
  async down(db) {
    for (const table of ["mapping_tables", "images", "sku_synonyms", "products", "categories", "brands"]) {
      await db.schema.dropTable(table);
    }
  },
};
