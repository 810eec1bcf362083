import { useMutation } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent } from 'react';
import { useNavigate, useParams } from 'react-router';

import { ErrorAlert } from '@/components/ui/error-alert';
import { LoadingState } from '@/components/ui/loading-state';
import { clusterPagePath } from '@/config/paths';
import type { Manifest } from '@/lib/api/types';

import { launchProduct } from '../api/catalog';
import { useCapacity, usePlan, useProduct } from '../hooks/use-catalog';
import { fieldsOf, initialValues, toOptions, validate, type FormValue, type FormValues } from '../lib/schema-form';
import { PlacementPreview } from './placement-preview';
import { SchemaFields } from './schema-fields';

/** The launch form of one product version, generated from its options schema. */
export function LaunchPage() {
  const { product = '', version = '' } = useParams();
  const manifest = useProduct(product, version);
  if (manifest.isPending) return <LoadingState label="Loading the product…" />;
  if (manifest.isError) return <ErrorAlert title="Could not load the product" error={manifest.error} />;
  return <LaunchForm manifest={manifest.data} />;
}

function LaunchForm({ manifest }: { manifest: Manifest }) {
  const fields = useMemo(() => fieldsOf(manifest.options_schema), [manifest]);
  const [values, setValues] = useState<FormValues>(() => initialValues(fields));
  const capacity = useCapacity();
  const plan = usePlan(manifest.name, manifest.version);
  const navigate = useNavigate();
  const launch = useMutation({
    mutationFn: (options: unknown) => launchProduct(manifest.name, manifest.version, options),
    onSuccess: (cluster) => navigate(clusterPagePath(cluster)),
  });
  const problems = validate(fields, values);
  const valid = Object.keys(problems).length === 0;

  function change(path: string, value: FormValue) {
    setValues((current) => ({ ...current, [path]: value }));
    plan.reset(); // a preview holds for the values it was made from only
  }

  function preview(event: FormEvent) {
    event.preventDefault();
    if (valid) plan.mutate(toOptions(fields, values));
  }

  return (
    <section className="page">
      <h1>
        Launch {manifest.name} {manifest.version}
      </h1>
      <p>{manifest.description}</p>
      <p className="muted">
        Roles:{' '}
        {Object.entries(manifest.roles)
          .map(([role, spec]) => `${role} (${spec.count.min}–${spec.count.max})`)
          .join(', ')}
      </p>
      <form className="form" onSubmit={preview} aria-label="launch options">
        <SchemaFields fields={fields} values={values} problems={problems} capacity={capacity.data} onChange={change} />
        <div className="form__actions">
          <button type="submit" className="button" disabled={!valid || plan.isPending}>
            {plan.isPending ? 'Placing…' : 'Preview placement'}
          </button>
          <button
            type="button"
            className="button button--primary"
            disabled={!valid || !plan.data?.placeable || launch.isPending}
            onClick={() => launch.mutate(toOptions(fields, values))}
          >
            {launch.isPending ? 'Launching…' : 'Confirm launch'}
          </button>
        </div>
      </form>
      {!plan.data && <p className="muted">Preview the placement first: it shows where each member would go, or what is short.</p>}
      {plan.data && <PlacementPreview plan={plan.data} />}
      {plan.isError && <ErrorAlert title="The preview failed" error={plan.error} />}
      {launch.isError && <ErrorAlert title="The launch was refused" error={launch.error} />}
    </section>
  );
}
