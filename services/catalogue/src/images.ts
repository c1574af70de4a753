import { createHash } from "node:crypto";
import { catalogueV1 } from "@analytics/contracts";
import type { Db } from "@analytics/db";
import { notFound, type FieldViolation } from "@analytics/errors";
import type { ServiceContext } from "@analytics/rpc";
import { answer, invalidItem, productBatch, type ItemOutcome } from "./batch";
import { announceProducts } from "./changes";
import * as repo from "./repository";
import type { ImageRow, ImageTarget } from "./repository";
import { textViolations } from "./validation";

/** ImageUploadResponse: where the product's image is now served. */
export interface UploadedImage {
  key: string;
  imageUrl: string;
}

export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

/** Where the gateway serves an image; the last segment is the SHA-256 of its bytes. */
export const imageUrlOf = (sha256: string) => `/v2/api/images/${sha256}`;

const ascii = (bytes: Uint8Array, from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));

/** The content type that an image's magic bytes announce; undefined for anything but PNG, JPEG, WebP, GIF. */
export function imageContentType(bytes: Uint8Array): string | undefined {
  if (ascii(bytes, 0, 8) === "\x89PNG\r\n\x1a\n") return "image/png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (["GIF87a", "GIF89a"].includes(ascii(bytes, 0, 6))) return "image/gif";
  if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 12) === "WEBP") return "image/webp";
  return undefined;
}

function uploadViolations(u: catalogueV1.ImageUpload, contentType: string | undefined): FieldViolation[] {
  const problems = textViolations(catalogueV1.ImageUploadSchema, u);
  if (u.imageData.length > MAX_IMAGE_BYTES) problems.push({ path: "imageData", message: "must be at most 10 MiB" });
  else if (!contentType) problems.push({ path: "imageData", message: "must be a PNG, JPEG, WebP or GIF image" });
  return problems;
}

/**
 * POST /products/imageupload(/batch): stores each image content-addressed and points the
 * product's imageUrl at it (with variantGroupId, every product of that variant group too, of that
 * season when sent). 200 with the URL, 400 invalid, 404 unknown key.
 */
export function uploadImages(ctx: ServiceContext, accountId: string, uploads: catalogueV1.ImageUpload[]): Promise<ItemOutcome<UploadedImage>[]> {
  const items = uploads.map((upload) => {
    const contentType = imageContentType(upload.imageData);
    const bytes = Buffer.from(upload.imageData.buffer, upload.imageData.byteOffset, upload.imageData.byteLength);
    const problems = uploadViolations(upload, contentType);
    const sha256 = problems.length ? "" : createHash("sha256").update(bytes).digest("hex");
    return { upload, problems, image: { sha256, content_type: contentType ?? "", bytes } };
  });
  const check = (item: (typeof items)[number]) => (item.problems.length ? invalidItem(item.upload.key, "key", item.problems) : undefined);
  return productBatch(ctx, accountId, items, check, async (tx, valid, reply) => {
    const matches = await repo.resolveReferences(tx, accountId, valid.map((v) => ({ key: v.item.upload.key })));
    const stored = new Map<string, ImageRow>();
    const targets: ImageTarget[] = [];
    valid.forEach(({ i, item: { upload, image } }, n) => {
      const match = matches[n];
      if (!match) return reply(i, answer(404, upload.key, "key", `product ${upload.key} not found`));
      stored.set(image.sha256, image);
      targets.push({ ord: n, product_id: match.id, image_url: imageUrlOf(image.sha256), variant_group_id: upload.variantGroupId || null, season: upload.season || null });
    });
    await repo.storeImages(tx, accountId, [...stored.values()]);
    const { changed, setting } = await repo.setImageUrls(tx, accountId, targets);
    await announceProducts(tx, accountId, new Map(changed.map((id) => [id, "image_set" as const])));
    // An upload whose products all have its image already (a re-send) is unchanged.
    valid.forEach(({ i, item: { upload, image } }, n) => {
      if (matches[n]) reply(i, { ...answer(200, upload.key, "key", setting.has(n) ? "image set" : "unchanged"), value: { key: upload.key, imageUrl: imageUrlOf(image.sha256) } });
    });
  });
}

/** GetImage: the bytes behind an imageUrl of the caller's account. */
export async function getImage(db: Db, accountId: string, sha256: string): Promise<ImageRow> {
  const image = /^[0-9a-f]{64}$/.test(sha256) ? await repo.findImage(db, accountId, sha256) : undefined;
  if (!image) throw notFound(`image ${sha256} not found`);
  return image;
}
