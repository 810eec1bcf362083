import type { DiskCapacity } from '@/lib/api/types';

import { diskClassOf, type FormField, type FormValue, type FormValues } from '../lib/schema-form';

type Props = {
  fields: FormField[];
  values: FormValues;
  problems: Record<string, string>;
  capacity: DiskCapacity[] | undefined;
  onChange: (path: string, value: FormValue) => void;
};

function bounds(field: FormField): string {
  const { minimum, maximum } = field.schema;
  if (minimum !== undefined && maximum !== undefined) return `${minimum}–${maximum}`;
  if (minimum !== undefined) return `≥ ${minimum}`;
  if (maximum !== undefined) return `≤ ${maximum}`;
  return '';
}

/** The values ticked in a `choices` field after one checkbox changed (kept in the schema's order). */
function ticked(field: FormField, value: FormValue | undefined, choice: string, on: boolean): string[] {
  const current = Array.isArray(value) ? value : [];
  const all = (field.schema.items?.enum ?? []).map(String);
  return all.filter((c) => (c === choice ? on : current.includes(c)));
}

/** Inputs for schema fields, groups as fieldsets; disk counts show how many disks of their class are free;
 * an array of choices is a checkbox per choice, an array of strings one comma-separated input. */
export function SchemaFields({ fields, values, problems, capacity, onChange }: Props) {
  return (
    <>
      {fields.map((field) => {
        if (field.kind === 'group') {
          return (
            <fieldset key={field.path} className="form__group">
              <legend>{field.label}</legend>
              <SchemaFields fields={field.children} values={values} problems={problems} capacity={capacity} onChange={onChange} />
            </fieldset>
          );
        }
        const id = `field-${field.path}`;
        const problem = problems[field.path];
        const diskClass = diskClassOf(field.path);
        const free = diskClass ? capacity?.find((c) => c.disk_class === diskClass)?.free : undefined;
        const value = values[field.path];
        const hint = [bounds(field), field.kind === 'list' ? 'separate with commas' : '', field.schema.description]
          .filter(Boolean)
          .join(' · ');
        if (field.kind === 'choices') {
          return (
            <fieldset key={field.path} className="form__field form__choices" aria-describedby={problem ? `${id}-problem` : undefined}>
              <legend>{field.label}</legend>
              {field.schema.items?.enum?.map((choice) => (
                <label key={String(choice)} className="form__choice">
                  <input
                    type="checkbox"
                    name={field.path}
                    value={String(choice)}
                    checked={Array.isArray(value) && value.includes(String(choice))}
                    onChange={(e) => onChange(field.path, ticked(field, value, String(choice), e.target.checked))}
                  />{' '}
                  {String(choice)}
                </label>
              ))}
              {hint && <small className="muted">{hint}</small>}
              {problem && (
                <small id={`${id}-problem`} className="form__problem" role="alert">
                  {field.label} {problem}
                </small>
              )}
            </fieldset>
          );
        }
        return (
          <div key={field.path} className="form__field">
            <label htmlFor={id}>
              {field.label}
              {diskClass && free !== undefined && (
                <span className="form__free" data-testid={`free-${diskClass}`}>
                  {' '}
                  ({free} free)
                </span>
              )}
            </label>
            {field.kind === 'boolean' ? (
              <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(field.path, e.target.checked)} />
            ) : field.kind === 'enum' ? (
              <select id={id} value={String(value ?? '')} onChange={(e) => onChange(field.path, e.target.value)}>
                {field.schema.enum?.map((choice) => (
                  <option key={String(choice)} value={String(choice)}>
                    {String(choice)}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                inputMode={field.kind === 'string' || field.kind === 'list' ? 'text' : 'decimal'}
                value={String(value ?? '')}
                aria-invalid={problem ? true : undefined}
                aria-describedby={problem ? `${id}-problem` : undefined}
                onChange={(e) => onChange(field.path, e.target.value)}
              />
            )}
            {hint && <small className="muted">{hint}</small>}
            {problem && (
              <small id={`${id}-problem`} className="form__problem" role="alert">
                {field.label} {problem}
              </small>
            )}
          </div>
        );
      })}
    </>
  );
}
