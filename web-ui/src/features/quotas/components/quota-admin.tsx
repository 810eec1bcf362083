import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';

import { ErrorAlert } from '@/components/ui/error-alert';
import type { Quota } from '@/lib/api/types';

import { getUserQuota, listQuotas, setUserQuota } from '../api/quotas';
import { LIMIT_NAMES, fieldsOf, limitLabel, updateOf, type LimitFields, type LimitName } from '../lib/quota';
import { QuotaTable } from './quota-table';

/** Admin: the quotas set, and a form to see and set one user's (an empty field: the platform's default). */
export function QuotaAdmin() {
  const queryClient = useQueryClient();
  const quotas = useQuery({ queryKey: ['quotas'], queryFn: listQuotas });
  const [username, setUsername] = useState('');
  const [loaded, setLoaded] = useState<Quota | null>(null);
  const [fields, setFields] = useState<LimitFields | null>(null);
  const [problems, setProblems] = useState<Partial<Record<LimitName, string>>>({});

  function show(quota: Quota) {
    setLoaded(quota);
    setFields(fieldsOf(quota));
    setProblems({});
  }

  const load = useMutation({ mutationFn: getUserQuota, onSuccess: show });
  const save = useMutation({
    mutationFn: (body: Parameters<typeof setUserQuota>[1]) => setUserQuota(loaded?.username ?? '', body),
    onSuccess: (quota) => {
      show(quota);
      void queryClient.invalidateQueries({ queryKey: ['quotas'] });
    },
  });

  function submitLoad(event: FormEvent) {
    event.preventDefault();
    save.reset();
    if (username.trim()) load.mutate(username.trim());
  }

  function submitSave(event: FormEvent) {
    event.preventDefault();
    if (!fields) return;
    const result = updateOf(fields);
    if ('problems' in result) {
      setProblems(result.problems);
      return;
    }
    setProblems({});
    save.mutate(result.update);
  }

  return (
    <div>
      {quotas.isError && <ErrorAlert title="Could not load the quotas" error={quotas.error} />}
      {quotas.data && quotas.data.length === 0 && <p className="muted">Every user has the platform's default quota.</p>}
      {quotas.data && quotas.data.length > 0 && (
        <table className="table" aria-label="quotas set">
          <thead>
            <tr>
              <th>User</th>
              <th>Clusters</th>
              <th>CPUs</th>
              <th>Memory (MiB)</th>
              <th>Floating IPs</th>
            </tr>
          </thead>
          <tbody>
            {quotas.data.map((q) => (
              <tr key={q.username}>
                <th scope="row">
                  <button type="button" className="button button--small" onClick={() => { setUsername(q.username); show(q); }}>
                    {q.username}
                  </button>
                </th>
                <td>{q.usage.clusters} of {q.limits.clusters}</td>
                <td>{q.usage.cpus} of {q.limits.cpus}</td>
                <td>{q.usage.mem_mb} of {q.limits.mem_mb}</td>
                <td>{q.usage.floating_ips} of {q.limits.floating_ips}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form className="form" onSubmit={submitLoad} aria-label="find a user's quota">
        <div className="form__field">
          <label htmlFor="quota-user">User</label>
          <input id="quota-user" value={username} onChange={(e) => setUsername(e.target.value)} />
        </div>
        <div className="form__actions">
          <button type="submit" className="button" disabled={load.isPending || !username.trim()}>
            Show quota
          </button>
        </div>
      </form>
      {load.isError && <ErrorAlert title={`Could not load the quota of ${username}`} error={load.error} />}
      {loaded && fields && (
        <>
          <QuotaTable quota={loaded} label={`quota of ${loaded.username}`} />
          <form className="form" onSubmit={submitSave} aria-label={`set the quota of ${loaded.username}`}>
            {LIMIT_NAMES.map((name) => (
              <div key={name} className="form__field">
                <label htmlFor={`quota-${name}`}>{limitLabel(name)}</label>
                <input
                  id={`quota-${name}`}
                  inputMode="decimal"
                  placeholder="default (leave empty)"
                  value={fields[name]}
                  aria-invalid={problems[name] ? true : undefined}
                  aria-describedby={problems[name] ? `quota-${name}-problem` : undefined}
                  onChange={(e) => setFields({ ...fields, [name]: e.target.value })}
                />
                {problems[name] && (
                  <small id={`quota-${name}-problem`} className="form__problem" role="alert">
                    {problems[name]}
                  </small>
                )}
              </div>
            ))}
            <div className="form__actions">
              <button type="submit" className="button button--primary" disabled={save.isPending}>
                Save quota of {loaded.username}
              </button>
            </div>
          </form>
          {save.isError && <ErrorAlert title="Could not save the quota" error={save.error} />}
          {save.isSuccess && <p className="alert alert--success" role="status">Saved.</p>}
        </>
      )}
    </div>
  );
}
