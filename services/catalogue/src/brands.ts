import type { Db } from "@analytics/db";
import { notFound } from "@analytics/errors";
import * as repo from "./repository";
import type { BrandFilter, Page } from "./repository";
import { checkText } from "./validation";

/** Brands and categories are read here; product writes create them (see products.ts). */

export function listBrands(db: Db, accountId: string, filter: BrandFilter, page: Page) {
  if (filter.name !== undefined) checkText("name", filter.name);
  if (filter.id !== undefined) checkText("id", filter.id);
  return repo.listBrands(db, accountId, filter, page);
}

export async function getBrand(db: Db, accountId: string, id: string) {
  const brand = await repo.findNamed(db, "brands", accountId, id);
  if (!brand) throw notFound(`brand ${id} not found`);
  return brand;
}

export function listCategories(db: Db, accountId: string) {
  return repo.listCategories(db, accountId);
}

export async function getCategory(db: Db, accountId: string, id: string) {
  const category = await repo.findNamed(db, "categories", accountId, id);
  if (!category) throw notFound(`category ${id} not found`);
  return category;
}
