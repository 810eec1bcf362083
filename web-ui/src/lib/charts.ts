// Series of the time-series database as chart lines: the cluster page's per-member charts and the
// admin page's per-node capacity charts (GET …/metrics, GET /admin/metrics).

/** A unit the API's series come in. */
export type Unit = 'cores' | 'bytes' | 'bytes/s' | 'disks';

/** A series as both routes send it: a figure, its labels, [unix seconds, value] points. */
export type AnySeries = { figure: string; points: [number, number][] };

export type Line = { key: string; points: [number, number][] };

/** One line per `keyOf(series)`, the series of `figures` with that key added up point by point; sorted by key. */
export function linesOf<S extends AnySeries>(series: readonly S[], figures: readonly string[],
                                             keyOf: (s: S) => string): Line[] {
  const lines = new Map<string, Map<number, number>>();
  for (const s of series) {
    if (!figures.includes(s.figure)) continue;
    const key = keyOf(s);
    const sums = lines.get(key) ?? new Map<number, number>();
    for (const [t, v] of s.points) sums.set(t, (sums.get(t) ?? 0) + v);
    lines.set(key, sums);
  }
  return [...lines.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, sums]) => ({ key, points: [...sums.entries()].sort(([a], [b]) => a - b) }));
}

/** An SVG polyline's `points` in a `width` × `height` box: time from `start` to `end`, 0 to `max` upwards. */
export function polyline(points: readonly [number, number][], start: number, end: number, max: number,
                         width: number, height: number): string {
  const span = Math.max(end - start, 1);
  const top = max > 0 ? max : 1;
  return points
    .map(([t, v]) => `${(((t - start) / span) * width).toFixed(1)},${(height - (v / top) * height).toFixed(1)}`)
    .join(' ');
}

/** A figure for people: cores with two decimals, disks whole, bytes (per second) in IEC units. */
export function formatValue(unit: Unit, value: number): string {
  if (unit === 'cores') return value.toFixed(2);
  if (unit === 'disks') return value.toFixed(0);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = value;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v >= 100 || i === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}${unit === 'bytes/s' ? '/s' : ''}`;
}
