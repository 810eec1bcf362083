import { describe, expect, it } from 'vitest';

import { formatValue, linesOf, polyline } from './charts';

type S = { figure: string; member: string; disk?: string; points: [number, number][] };
const s = (figure: string, member: string, points: [number, number][], disk?: string): S => ({ figure, member, points, disk });
const byMember = (x: S) => (x.disk ? `${x.member} ${x.disk}` : x.member);

describe('linesOf', () => {
  it('adds the chart figures up per key and time, one line per key, sorted', () => {
    const lines = linesOf([
      s('disk_read', 'm-2', [[10, 1], [20, 2]]),
      s('disk_write', 'm-2', [[20, 5], [10, 3]]),
      s('disk_read', 'm-1', [[10, 7]]),
      s('cpu', 'm-1', [[10, 0.5]]),
    ], ['disk_read', 'disk_write'], byMember);
    expect(lines).toEqual([
      { key: 'm-1', points: [[10, 7]] },
      { key: 'm-2', points: [[10, 4], [20, 7]] },
    ]);
  });

  it('keeps one line per disk when the key says so', () => {
    const lines = linesOf([s('disk_used', 'm-1', [[1, 9]], '/data/2'), s('disk_used', 'm-1', [[1, 3]], '/data/1')],
      ['disk_used'], byMember);
    expect(lines.map((l) => l.key)).toEqual(['m-1 /data/1', 'm-1 /data/2']);
  });
});

describe('polyline', () => {
  it('maps time left to right and values bottom to top', () => {
    expect(polyline([[100, 0], [150, 5], [200, 10]], 100, 200, 10, 200, 100)).toBe('0.0,100.0 100.0,50.0 200.0,0.0');
  });
  it('draws an all-zero line at the bottom', () => {
    expect(polyline([[0, 0], [1, 0]], 0, 1, 0, 10, 10)).toBe('0.0,10.0 10.0,10.0');
  });
});

describe('formatValue', () => {
  it.each([
    ['cores', 1.234, '1.23'],
    ['disks', 3, '3'],
    ['bytes', 512, '512 B'],
    ['bytes', 1536, '1.5 KiB'],
    ['bytes/s', 200 * 1024 * 1024, '200 MiB/s'],
  ] as const)('%s %d is %s', (unit, value, text) => {
    expect(formatValue(unit, value)).toBe(text);
  });
});
