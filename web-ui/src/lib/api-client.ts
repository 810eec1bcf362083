// Typed fetch client for the Spindle REST API (same origin as the UI).
// Every failure becomes an ApiError carrying the platform's error envelope as it is.
import type { ErrorEnvelope } from './api/types';
import { getToken } from './session';

/** What an error is about (free-form, by code): the envelope's `details`. */
export type ApiErrorDetails = ErrorEnvelope['error']['details'];

/** An error the API returned (or a failure to reach it), with its machine-readable code. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: ApiErrorDetails;

  constructor(status: number, code: string, message: string, details: ApiErrorDetails = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

type ErrorBody = ErrorEnvelope['error'];
/** The error envelope as it may arrive: a sender other than Spindle's services may leave out `details`. */
type ReceivedEnvelope = { error: Omit<ErrorBody, 'details'> & { details?: ErrorBody['details'] } };

function isErrorEnvelope(body: unknown): body is ReceivedEnvelope {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const error: unknown = body.error;
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string' &&
    'message' in error &&
    typeof error.message === 'string'
  );
}

async function readJson(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    return undefined;
  }
}

/** Turns a non-2xx response into an ApiError, using the envelope when the body has one. */
export async function errorFromResponse(response: Response): Promise<ApiError> {
  const body = await readJson(response);
  if (isErrorEnvelope(body)) {
    const { code, message, details } = body.error;
    return new ApiError(response.status, code, message, details ?? {});
  }
  const reason = response.statusText ? ` ${response.statusText}` : '';
  return new ApiError(response.status, 'HTTP_ERROR', `the API answered HTTP ${response.status}${reason}`);
}

/** Calls the API at `path` and returns its JSON body typed as `T`; throws ApiError on failure. */
export async function apiRequest<T>(path: string, init: RequestInit = {}): Promise<T> {
  const headers = authHeaders(init.headers);
  headers.set('Accept', 'application/json');
  if (init.body !== undefined && !headers.has('Content-Type')) headers.set('Content-Type', 'application/json');
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers });
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new ApiError(0, 'NETWORK_ERROR', `cannot reach the Spindle API: ${reason}`);
  }
  if (!response.ok) throw await errorFromResponse(response);
  if (response.status === 204) return undefined as T;
  const body = await readJson(response);
  if (body === undefined) {
    throw new ApiError(response.status, 'INVALID_RESPONSE', `the API answered ${path} with a body that is not JSON`);
  }
  return body as T;
}

/** `init` headers plus the signed-in user's token, when there is one. */
export function authHeaders(init?: HeadersInit): Headers {
  const headers = new Headers(init);
  const token = getToken();
  if (token) headers.set('Authorization', `Bearer ${token}`);
  return headers;
}

/** JSON body for POST/PATCH calls. */
export function jsonBody(method: 'POST' | 'PATCH' | 'DELETE', body?: unknown): RequestInit {
  return body === undefined ? { method } : { method, body: JSON.stringify(body) };
}
