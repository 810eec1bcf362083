import { describe, expect, it } from 'vitest';

import {
  binaryInputFrame,
  canOpenTerminal,
  endedDescription,
  inputFrame,
  parseServerMessage,
  resizeMessage,
  terminalProtocols,
  terminalUrl,
} from './terminal';

const ADDRESS = { owner: 'ann', product: 'static-web', version: '1.0', id: 'c0123456789' };

describe('terminalUrl', () => {
  it("is the member's terminal on the page's own server, ws: or wss: as the page", () => {
    expect(terminalUrl({ protocol: 'http:', host: '127.0.0.1:8080' }, ADDRESS, 'c0123456789-server-1')).toBe(
      'ws://127.0.0.1:8080/clusters/ann/static-web/1.0/c0123456789/members/c0123456789-server-1/terminal',
    );
    expect(terminalUrl({ protocol: 'https:', host: 'spindle.example' }, ADDRESS, 'server-1')).toBe(
      'wss://spindle.example/clusters/ann/static-web/1.0/c0123456789/members/server-1/terminal',
    );
  });

  it('never carries the token, and keeps a member name within its path segment', () => {
    const url = terminalUrl({ protocol: 'http:', host: 'h' }, ADDRESS, '../x?token=1');
    expect(url).toBe('ws://h/clusters/ann/static-web/1.0/c0123456789/members/..%2Fx%3Ftoken%3D1/terminal');
  });
});

describe('terminalProtocols', () => {
  it("offers the terminal's subprotocol and the token as bearer.<token>", () => {
    expect(terminalProtocols('spd_Ab-9_x')).toEqual(['spindle.terminal', 'bearer.spd_Ab-9_x']);
  });

  it.each([null, '', 'spd_a b', 'spd_a,b', 'spd_é'])('refuses a token a subprotocol cannot carry: %j', (token) => {
    expect(() => terminalProtocols(token)).toThrow(/sign in again/);
  });
});

describe('resizeMessage', () => {
  it('is the control frame {"resize": [cols, rows]}', () => {
    expect(JSON.parse(resizeMessage(120, 40)!)).toEqual({ resize: [120, 40] });
    expect(JSON.parse(resizeMessage(1, 1000)!)).toEqual({ resize: [1, 1000] });
  });

  it.each([
    [0, 24],
    [80, 0],
    [1001, 24],
    [80.5, 24],
    [Number.NaN, 24],
  ])('is nothing for a size the server would refuse: %s × %s', (cols, rows) => {
    expect(resizeMessage(cols, rows)).toBeNull();
  });
});

describe('input frames', () => {
  it('carries typed text as UTF-8 bytes', () => {
    expect(Array.from(inputFrame('é\r'))).toEqual([0xc3, 0xa9, 0x0d]);
  });

  it("carries xterm's binary input byte for byte", () => {
    expect(Array.from(binaryInputFrame('\x1b[M\xff'))).toEqual([0x1b, 0x5b, 0x4d, 0xff]);
  });
});

describe('parseServerMessage', () => {
  it("reads the session's end and errors", () => {
    expect(parseServerMessage('{"exit_code": 0, "reason": "exited"}')).toEqual({
      kind: 'end',
      end: { exitCode: 0, reason: 'exited' },
    });
    expect(parseServerMessage('{"exit_code": null, "reason": "idle"}')).toEqual({
      kind: 'end',
      end: { exitCode: null, reason: 'idle' },
    });
    expect(parseServerMessage('{"error": {"code": "BAD_CONTROL", "message": "resize takes…"}}')).toEqual({
      kind: 'error',
      code: 'BAD_CONTROL',
      message: 'resize takes…',
    });
  });

  it.each(['not json', '42', 'null', '{"exit_code": 0}', '{"other": 1}'])('knows nothing else: %s', (text) => {
    expect(parseServerMessage(text)).toEqual({ kind: 'unknown' });
  });
});

describe('endedDescription', () => {
  it('says how the session ended', () => {
    expect(endedDescription({ exitCode: 0, reason: 'exited' }, true, 1000)).toBe(
      'Session ended: the shell exited, exit code 0.',
    );
    expect(endedDescription({ exitCode: 137, reason: 'idle' }, true, 1000)).toMatch(/no input for 15 minutes, exit code 137/);
    expect(endedDescription({ exitCode: null, reason: 'max_duration' }, true, 1000)).toBe(
      'Session ended: a session lasts an hour at most.',
    );
    expect(endedDescription(null, true, 1000)).toBe('Session ended.');
    expect(endedDescription(null, true, 1006)).toBe('Session ended: the connection was lost (code 1006).');
    expect(endedDescription(null, false, 1006)).toMatch(/could not be opened/);
  });
});

describe('canOpenTerminal', () => {
  it('is for placed members of clusters that have containers', () => {
    expect(canOpenTerminal('RUNNING', { node: 'node-1' })).toBe(true);
    expect(canOpenTerminal('DEGRADED', { node: 'node-1' })).toBe(true);
    expect(canOpenTerminal('RUNNING', { node: null })).toBe(false);
    expect(canOpenTerminal('DESTROYING', { node: 'node-1' })).toBe(false);
    expect(canOpenTerminal('FAILED', { node: 'node-1' })).toBe(false);
  });
});
