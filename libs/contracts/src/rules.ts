import { getOption, type DescEnum, type DescField, type DescFile } from "@bufbuild/protobuf";
import { rest_name, rules, webhook_only, type FieldRules } from "./gen/common/v1/rules_pb";

const known = new WeakMap<DescField, FieldRules>();

/**
 * A field's rules (its `(analytics.common.v1.rules)` option, the defaults where it has none).
 * Read once per field: getOption decodes the option from the descriptor on every call, and the
 * checks of a 500-order batch ask 90,000 times.
 */
export function fieldRules(field: DescField): FieldRules {
  let found = known.get(field);
  if (!found) known.set(field, (found = getOption(field, rules)));
  return found;
}

/**
 * An enum's values by their REST names (`(analytics.common.v1.rest_name)`), keyed by the value's
 * name without the enum's prefix: `restNames(EventTypeSchema).UPDATE_SKU` is "update_sku".
 * Values without one (the zero value) are left out.
 */
export function restNames(desc: DescEnum): Readonly<Record<string, string>> {
  return Object.fromEntries(desc.values.flatMap((v) => (getOption(v, rest_name) ? [[v.localName, getOption(v, rest_name)]] : [])));
}

/** The REST names of an enum's values marked `(analytics.common.v1.webhook_only)`: event types pushed to webhooks, never queue entries. */
export function webhookOnlyNames(desc: DescEnum): readonly string[] {
  return desc.values.flatMap((v) => (getOption(v, rest_name) && getOption(v, webhook_only) ? [getOption(v, rest_name)] : []));
}

const allowed = new WeakMap<DescField, readonly string[] | null>();

/** The REST names a text field (or list of text) takes, from its rules' `values_of`; undefined: any text. */
export function restValues(field: DescField): readonly string[] | undefined {
  let found = allowed.get(field);
  if (found === undefined) {
    const name = fieldRules(field).valuesOf;
    const desc = name ? enumNamed(field.parent.file, name) : undefined;
    if (name && !desc) throw new Error(`${field.parent.typeName}.${field.name}: values_of names no enum ${name} of its file or their imports`);
    allowed.set(field, (found = desc ? Object.values(restNames(desc)) : null));
  }
  return found ?? undefined;
}

function enumNamed(file: DescFile, typeName: string): DescEnum | undefined {
  return file.enums.find((e) => e.typeName === typeName) ?? file.dependencies.map((d) => enumNamed(d, typeName)).find(Boolean);
}
