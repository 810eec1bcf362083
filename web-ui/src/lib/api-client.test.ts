import { describe, expect, it, vi } from 'vitest';

import { jsonResponse } from '@/testing/json-response';

import { ApiError, apiRequest } from './api-client';

function stubFetch(result: Response | Error) {
  const fetchMock = vi.fn(() => (result instanceof Error ? Promise.reject(result) : Promise.resolve(result)));
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('apiRequest', () => {
  it('returns the JSON body of a successful response', async () => {
    const fetchMock = stubFetch(jsonResponse({ services: [] }));

    await expect(apiRequest('/status')).resolves.toEqual({ services: [] });
    const [path, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(path).toBe('/status');
    expect(new Headers(init.headers).get('Accept')).toBe('application/json');
  });

  it('turns the error envelope into an ApiError with the message as the API wrote it', async () => {
    stubFetch(
      jsonResponse(
        {
          error: {
            code: 'CONSUL_UNAVAILABLE',
            message: 'cannot reach Consul at http://127.0.0.1:8500: connection refused',
            details: { consul_url: 'http://127.0.0.1:8500' },
          },
        },
        503,
      ),
    );

    const error = await failure(apiRequest('/status'));
    expect(error.status).toBe(503);
    expect(error.code).toBe('CONSUL_UNAVAILABLE');
    expect(error.message).toBe('cannot reach Consul at http://127.0.0.1:8500: connection refused');
    expect(error.details).toEqual({ consul_url: 'http://127.0.0.1:8500' });
  });

  it('gives an envelope without details an empty details object', async () => {
    stubFetch(jsonResponse({ error: { code: 'NOT_FOUND', message: 'no such cluster' } }, 404));

    const error = await failure(apiRequest('/clusters/x'));
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND', message: 'no such cluster', details: {} });
  });

  it('reports an error response without an envelope by its HTTP status', async () => {
    stubFetch(new Response('<html>Bad Gateway</html>', { status: 502, statusText: 'Bad Gateway' }));

    const error = await failure(apiRequest('/status'));
    expect(error).toMatchObject({ status: 502, code: 'HTTP_ERROR', message: 'the API answered HTTP 502 Bad Gateway' });
  });

  it('does not mistake a JSON body of another shape for an envelope', async () => {
    stubFetch(jsonResponse({ error: 'boom' }, 500));

    const error = await failure(apiRequest('/status'));
    expect(error).toMatchObject({ status: 500, code: 'HTTP_ERROR' });
  });

  it('reports a network failure as NETWORK_ERROR', async () => {
    stubFetch(new TypeError('Failed to fetch'));

    const error = await failure(apiRequest('/status'));
    expect(error).toMatchObject({ status: 0, code: 'NETWORK_ERROR', message: 'cannot reach the Spindle API: Failed to fetch' });
  });

  it('rejects a successful response whose body is not JSON', async () => {
    stubFetch(new Response('<!doctype html>', { status: 200 }));

    const error = await failure(apiRequest('/status'));
    expect(error).toMatchObject({ status: 200, code: 'INVALID_RESPONSE' });
  });
});
