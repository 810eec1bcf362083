import { useQuery } from '@tanstack/react-query';

import { ErrorAlert } from '@/components/ui/error-alert';
import { LineChart } from '@/components/ui/line-chart';
import type { NodeSeries } from '@/lib/api/types';
import type { Unit } from '@/lib/charts';
import { linesOf } from '@/lib/charts';

import { getNodeMetrics } from '../api/inventory';

const CHARTS: readonly { id: string; title: string; unit: Unit; figures: readonly NodeSeries['figure'][];
  key: (s: NodeSeries) => string }[] = [
  { id: 'node-cpus', title: 'CPUs: capacity, allocated, used', unit: 'cores',
    figures: ['cpus', 'cpus_allocated', 'cpus_used'], key: (s) => `${s.node} ${s.figure}` },
  { id: 'node-memory', title: 'Memory: capacity, allocated, used', unit: 'bytes',
    figures: ['memory', 'memory_allocated', 'memory_used'], key: (s) => `${s.node} ${s.figure}` },
  { id: 'disks', title: 'Disks by class and state (wiping: the wipe queue)', unit: 'disks',
    figures: ['disks'], key: (s) => `${s.node} ${s.disk_class ?? ''} ${s.state ?? ''}` },
];

/** Per node and disk class: capacity, allocation, use and the wipe queue over the last hour. */
export function CapacityCharts() {
  const metrics = useQuery({ queryKey: ['node-metrics'], queryFn: () => getNodeMetrics(), refetchInterval: 15000 });
  if (metrics.isError) return <ErrorAlert title="Could not load the capacity figures" error={metrics.error} />;
  if (!metrics.data) return null;
  const { series, start, end } = metrics.data;
  return (
    <div className="charts" data-testid="capacity-charts">
      {CHARTS.map((chart) => (
        <LineChart key={chart.id} id={chart.id} title={chart.title} unit={chart.unit}
          lines={linesOf(series, chart.figures, chart.key)} start={Date.parse(start) / 1000} end={Date.parse(end) / 1000} />
      ))}
    </div>
  );
}
