import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';

/** App-wide context: the query cache shared by every feature's API hooks. */
export function AppProvider({ children }: { children: ReactNode }) {
  // One retry absorbs a blip; more would keep an API error off the screen for seconds.
  const [queryClient] = useState(() => new QueryClient({ defaultOptions: { queries: { retry: 1 } } }));
  return <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>;
}
