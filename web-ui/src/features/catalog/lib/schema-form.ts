// A launch form generated from a product's JSON Schema of options (the subset manifests use:
// nested objects of integer / number / string / boolean / enum fields with defaults and bounds,
// arrays of enum values — checkboxes, e.g. placement.anti_affinity — and arrays of strings — a
// comma-separated input, e.g. placement.excluded_nodes).
// Pure functions: the schema gives the fields, the form keeps raw input values by dotted path,
// and those become the options object the API validates again.

export type JsonSchema = {
  type?: string | string[];
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  items?: JsonSchema;
  uniqueItems?: boolean;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

/** `choices`: an array of enum values (a checkbox each); `list`: an array of strings (typed comma-separated). */
export type FieldKind = 'integer' | 'number' | 'string' | 'boolean' | 'enum' | 'choices' | 'list';

/** One input of the form, or a group (an object) holding more. */
export type FormField =
  | { kind: FieldKind; path: string; label: string; schema: JsonSchema; required: boolean }
  | { kind: 'group'; path: string; label: string; schema: JsonSchema; children: FormField[] };

/** Raw input values by dotted path: strings as typed, booleans for checkboxes, the checked values of `choices`. */
export type FormValue = string | boolean | string[];
export type FormValues = Record<string, FormValue>;

function typeOf(schema: JsonSchema): string | undefined {
  return Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
}

function labelOf(key: string, schema: JsonSchema): string {
  if (schema.title) return schema.title;
  const words = key.replace(/_mb$/, ' (MiB)').replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The fields of an object schema, in the schema's order; unknown types are left out. */
export function fieldsOf(schema: JsonSchema, prefix = ''): FormField[] {
  const fields: FormField[] = [];
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    const label = labelOf(key, sub);
    const type = typeOf(sub);
    const required = !!schema.required?.includes(key);
    if (sub.enum) {
      fields.push({ kind: 'enum', path, label, schema: sub, required });
    } else if (type === 'array' && sub.items?.enum) {
      fields.push({ kind: 'choices', path, label, schema: sub, required });
    } else if (type === 'array' && typeOf(sub.items ?? {}) === 'string') {
      fields.push({ kind: 'list', path, label, schema: sub, required });
    } else if (type === 'object' || sub.properties) {
      fields.push({ kind: 'group', path, label, schema: sub, children: fieldsOf(sub, path) });
    } else if (type === 'integer' || type === 'number' || type === 'string' || type === 'boolean') {
      fields.push({ kind: type, path, label, schema: sub, required });
    }
  }
  return fields;
}

function leaves(fields: FormField[]): Exclude<FormField, { kind: 'group' }>[] {
  return fields.flatMap((f) => (f.kind === 'group' ? leaves(f.children) : [f]));
}

/** The form's starting values: each field's schema default (empty when it has none). */
export function initialValues(fields: FormField[]): FormValues {
  const values: FormValues = {};
  for (const field of leaves(fields)) {
    const fallback = field.schema.default;
    const list = Array.isArray(fallback) ? fallback.map(String) : [];
    if (field.kind === 'boolean') values[field.path] = fallback === true;
    else if (field.kind === 'choices') values[field.path] = list;
    else if (field.kind === 'list') values[field.path] = list.join(', ');
    else values[field.path] = fallback === undefined ? '' : String(fallback);
  }
  return values;
}

function parseNumber(raw: string, integer: boolean): number | string {
  const text = raw.trim();
  if (!/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text)) return integer ? 'must be a whole number' : 'must be a number';
  const value = Number(text);
  if (integer && !Number.isInteger(value)) return 'must be a whole number';
  return value;
}

/** The items of a `list` input: separated by commas or white space, empty ones dropped. */
export function splitList(raw: string): string[] {
  return raw.split(/[\s,]+/).filter(Boolean);
}

function matches(pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(text);
  } catch {
    return true; // a pattern this browser cannot read: the API checks it
  }
}

function stringProblem(text: string, schema: JsonSchema): string | null {
  const { minLength, maxLength, pattern } = schema;
  if (minLength !== undefined && text.length < minLength) return `needs ${minLength}+ characters`;
  if (maxLength !== undefined && text.length > maxLength) return `allows ${maxLength} characters`;
  if (pattern !== undefined && !matches(pattern, text)) return 'has characters that are not allowed';
  return null;
}

function listProblem(items: string[], field: FormField): string | null {
  const { maxItems, uniqueItems, items: each } = field.schema;
  if (maxItems !== undefined && items.length > maxItems) return `allows ${maxItems} entries`;
  if (uniqueItems && new Set(items).size !== items.length) return 'names an entry twice';
  if (field.kind === 'choices') {
    const unknown = items.find((item) => !each?.enum?.map(String).includes(item));
    return unknown === undefined ? null : `has ${unknown}, which is not one of the choices`;
  }
  for (const item of items) {
    const problem = stringProblem(item, each ?? {});
    if (problem) return `${item}: ${problem}`;
  }
  return null;
}

function boundsProblem(value: number, schema: JsonSchema): string | null {
  if (schema.minimum !== undefined && value < schema.minimum) return `must be at least ${schema.minimum}`;
  if (schema.maximum !== undefined && value > schema.maximum) return `must be at most ${schema.maximum}`;
  if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum)
    return `must be more than ${schema.exclusiveMinimum}`;
  if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum)
    return `must be less than ${schema.exclusiveMaximum}`;
  return null;
}

/** Problems by dotted path (empty when the form is valid); empty optional inputs are fine. */
export function validate(fields: FormField[], values: FormValues): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const field of leaves(fields)) {
    const raw = values[field.path];
    if (field.kind === 'boolean' || typeof raw === 'boolean') continue;
    if (field.kind === 'choices' || field.kind === 'list') {
      const items = Array.isArray(raw) ? raw : splitList(raw ?? '');
      const problem = items.length === 0 && field.required ? 'is required' : listProblem(items, field);
      if (problem) problems[field.path] = problem;
      continue;
    }
    if (raw === undefined || Array.isArray(raw) || raw.trim() === '') {
      if (field.required) problems[field.path] = 'is required';
      continue;
    }
    if (field.kind === 'integer' || field.kind === 'number') {
      const parsed = parseNumber(raw, field.kind === 'integer');
      const problem = typeof parsed === 'string' ? parsed : boundsProblem(parsed, field.schema);
      if (problem) problems[field.path] = problem;
    } else if (field.kind === 'enum') {
      if (!field.schema.enum?.map(String).includes(raw)) problems[field.path] = 'is not one of the choices';
    } else {
      const problem = stringProblem(raw, field.schema);
      if (problem) problems[field.path] = problem;
    }
  }
  return problems;
}

function setAt(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  const last = keys.pop() ?? path;
  let node = target;
  for (const key of keys) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[last] = value;
}

/** The options object for the API from valid form values; empty inputs are left for the API's defaults
 * (checkboxes, of a boolean or of `choices`, always say what they are). */
export function toOptions(fields: FormField[], values: FormValues): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const field of leaves(fields)) {
    const raw = values[field.path];
    if (field.kind === 'choices') {
      // In the schema's order, whatever order they were ticked in.
      const checked = Array.isArray(raw) ? raw : [];
      setAt(options, field.path, (field.schema.items?.enum ?? []).filter((choice) => checked.includes(String(choice))));
      continue;
    }
    if (raw === undefined || raw === '' || Array.isArray(raw)) continue;
    if (field.kind === 'list') {
      const items = splitList(String(raw));
      if (items.length) setAt(options, field.path, items);
    } else if (field.kind === 'boolean') setAt(options, field.path, raw === true);
    else if (field.kind === 'integer' || field.kind === 'number') setAt(options, field.path, Number(raw));
    else if (field.kind === 'enum') {
      setAt(options, field.path, field.schema.enum?.find((choice) => String(choice) === raw) ?? raw);
    } else setAt(options, field.path, raw);
  }
  return options;
}

/** The disk class a field counts disks of (`….disks.<class>`), or null. */
export function diskClassOf(path: string): string | null {
  const match = /(?:^|\.)disks\.([a-z0-9-]+)$/.exec(path);
  return match?.[1] ?? null;
}
