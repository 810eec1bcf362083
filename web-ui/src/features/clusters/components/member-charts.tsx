import { useQuery } from '@tanstack/react-query';

import { ErrorAlert } from '@/components/ui/error-alert';
import { LineChart } from '@/components/ui/line-chart';
import type { MetricSeries } from '@/lib/api/types';
import { linesOf } from '@/lib/charts';

import { getClusterMetrics } from '../api/clusters';
import type { ClusterAddress } from '../lib/cluster';

type Figure = MetricSeries['figure'];

/** The cluster page's charts: a title and the figures drawn in it (one line per member each). */
const CHARTS: readonly { id: string; title: string; figures: readonly Figure[] }[] = [
  { id: 'cpu', title: 'CPU (cores)', figures: ['cpu'] },
  { id: 'memory', title: 'Memory', figures: ['memory'] },
  { id: 'disk-io', title: 'Disk I/O (read + write per second)', figures: ['disk_read', 'disk_write'] },
  { id: 'network', title: 'Network (receive + transmit per second)', figures: ['network_receive', 'network_transmit'] },
  { id: 'disk-used', title: 'Bytes used on dedicated disks', figures: ['disk_used'] },
];

const lineKey = (s: MetricSeries) => (s.disk ? `${s.member} ${s.disk}` : s.member);

/** Per-member CPU, memory, disk I/O, network and disk use over the last 30 minutes, refreshed every 15 s. */
export function MemberCharts({ address }: { address: ClusterAddress }) {
  const metrics = useQuery({
    queryKey: ['cluster-metrics', address.id],
    queryFn: () => getClusterMetrics(address),
    refetchInterval: 15000,
  });
  if (metrics.isError) return <ErrorAlert title="Could not load the cluster's figures" error={metrics.error} />;
  if (!metrics.data) return null;
  const { series, start, end } = metrics.data;
  if (series.length === 0) {
    return <p data-testid="charts-empty">No figures yet: each node reports its members every 15 seconds.</p>;
  }
  return (
    <div className="charts" data-testid="member-charts">
      {CHARTS.map((chart) => (
        <LineChart key={chart.id} id={chart.id} title={chart.title}
          unit={series.find((s) => chart.figures.includes(s.figure))?.unit ?? 'bytes'}
          lines={linesOf(series, chart.figures, lineKey)} start={Date.parse(start) / 1000} end={Date.parse(end) / 1000} />
      ))}
    </div>
  );
}
