import { useQuery } from '@tanstack/react-query';

import { getToken } from '@/lib/session';

import { getMe } from '../api/get-me';

/** Who is signed in (no request at all without a token). */
export function useMe() {
  return useQuery({ queryKey: ['me', getToken()], queryFn: getMe, enabled: getToken() !== null, staleTime: 60_000 });
}
