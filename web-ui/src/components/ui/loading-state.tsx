/** Placeholder shown while data loads; announced to screen readers. */
export function LoadingState({ label }: { label: string }) {
  return (
    <p className="loading-state" role="status">
      <span className="loading-state__spinner" aria-hidden="true" />
      {label}
    </p>
  );
}
