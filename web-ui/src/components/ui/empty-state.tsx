import type { ReactNode } from 'react';

/** Explains why a view has nothing to show and what to do about it. */
export function EmptyState({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="empty-state">
      <p className="empty-state__title">{title}</p>
      <div className="empty-state__body">{children}</div>
    </div>
  );
}
