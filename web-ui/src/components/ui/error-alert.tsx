import { ApiError } from '@/lib/api-client';

type ErrorAlertProps = { title: string; error: Error; onRetry?: () => void };

/** Shows a failure with the API's own message, unchanged, and its error code when there is one. */
export function ErrorAlert({ title, error, onRetry }: ErrorAlertProps) {
  return (
    <div className="alert alert--danger" role="alert">
      <p className="alert__title">{title}</p>
      <p className="alert__message">{error.message}</p>
      {error instanceof ApiError && <p className="alert__code">{error.code}</p>}
      {onRetry && (
        <button type="button" className="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}
