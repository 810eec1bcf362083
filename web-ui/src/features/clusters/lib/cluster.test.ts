import { describe, expect, it } from 'vitest';

import { clusterPath, isSettled, parseTimestamp } from './cluster';

describe('isSettled', () => {
  it('is true for RUNNING, FAILED and DESTROYED only', () => {
    expect(['RUNNING', 'FAILED', 'DESTROYED'].map((s) => isSettled(s))).toEqual([true, true, true]);
    expect(['PENDING', 'DEPLOYING', 'DESTROYING', 'DEGRADED'].map((s) => isSettled(s))).toEqual([false, false, false, false]);
  });

  it('treats a state it does not know, or none yet, as not settled', () => {
    expect(isSettled('SOMETHING_NEW')).toBe(false);
    expect(isSettled(undefined)).toBe(false);
  });

  it('after a delete, waits for DESTROYED', () => {
    expect(isSettled('RUNNING', true)).toBe(false);
    expect(isSettled('DESTROYED', true)).toBe(true);
  });
});

describe('parseTimestamp', () => {
  it('reads RFC 3339 timestamps, and ones without a zone as UTC', () => {
    const at = Date.UTC(2026, 10, 23, 19, 52, 47, 123);
    expect(parseTimestamp('2026-11-23T19:52:47.123Z').getTime()).toBe(at);
    expect(parseTimestamp('2026-11-23T19:52:47.123+00:00').getTime()).toBe(at);
    expect(parseTimestamp('2026-11-23T19:52:47.123').getTime()).toBe(at);
  });
});

describe('clusterPath', () => {
  it('is the public address of the cluster', () => {
    expect(clusterPath({ owner: 'ann', product: 'spark', version: '3.5', id: 'c-1' })).toBe('/clusters/ann/spark/3.5/c-1');
  });
});
