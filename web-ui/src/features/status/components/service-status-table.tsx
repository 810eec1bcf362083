import type { ServiceStatus } from '@/lib/api/types';
import { ServiceHealthBadge } from './service-health-badge';

/** One row per service: health, where its instances run, and why it is not passing. */
export function ServiceStatusTable({ services }: { services: ServiceStatus[] }) {
  return (
    <table className="table">
      <thead>
        <tr>
          <th scope="col">Service</th>
          <th scope="col">Health</th>
          <th scope="col">Instances</th>
          <th scope="col">Detail</th>
        </tr>
      </thead>
      <tbody>
        {services.map((service) => (
          <tr key={service.name}>
            <th scope="row">{service.name}</th>
            <td>
              <ServiceHealthBadge health={service.status} />
            </td>
            <td className="table__mono">{service.instances.join(', ') || '—'}</td>
            <td>{service.detail}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
