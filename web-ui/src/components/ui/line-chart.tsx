import { formatValue, polyline, type Line, type Unit } from '@/lib/charts';

const WIDTH = 480;
const HEIGHT = 120;
// Lines take these colours in turn.
const COLOURS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777'];

/** Lines over time (unix seconds up to `end`, from `start` or the first point if later: a young
 * cluster's lines span the chart), 0 at the bottom; a legend with each line's last value. */
export function LineChart({ id, title, unit, lines, start, end }: {
  id: string; title: string; unit: Unit; lines: Line[]; start: number; end: number;
}) {
  const max = Math.max(0, ...lines.flatMap((l) => l.points.map(([, v]) => v)));
  const first = Math.min(end, ...lines.flatMap((l) => l.points.map(([t]) => t)));
  const from = Math.max(start, first);
  return (
    <figure className="chart" data-testid={`chart-${id}`} data-max={max}>
      <figcaption>
        {title} <span className="chart__max">max {formatValue(unit, max)}</span>
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width={WIDTH} height={HEIGHT} role="img" aria-label={title}>
        <rect x="0" y="0" width={WIDTH} height={HEIGHT} fill="none" stroke="#d1d5db" />
        {lines.map((line, i) => (
          <polyline key={line.key} data-line={line.key} fill="none" strokeWidth="1.5"
            stroke={COLOURS[i % COLOURS.length]} points={polyline(line.points, from, end, max, WIDTH, HEIGHT)} />
        ))}
      </svg>
      <ul className="chart__legend">
        {lines.map((line, i) => (
          <li key={line.key} data-line={line.key} data-last={line.points.at(-1)?.[1] ?? 0}
            style={{ color: COLOURS[i % COLOURS.length] }}>
            {line.key}: {formatValue(unit, line.points.at(-1)?.[1] ?? 0)}
          </li>
        ))}
      </ul>
    </figure>
  );
}
