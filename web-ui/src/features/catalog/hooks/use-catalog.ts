import { useMutation, useQuery } from '@tanstack/react-query';

import { getCapacity, getProduct, getProducts, planLaunch } from '../api/catalog';

/** The catalog; looked at again every 5 s while a product's images are still being built. */
export function useProducts() {
  return useQuery({
    queryKey: ['products'],
    queryFn: getProducts,
    refetchInterval: (query) => (query.state.data?.some((p) => p.images.state === 'preparing') ? 5000 : false),
  });
}

export function useProduct(product: string, version: string) {
  return useQuery({ queryKey: ['product', product, version], queryFn: () => getProduct(product, version) });
}

/** Free disks per class, kept fresh while a launch form is open. */
export function useCapacity() {
  return useQuery({ queryKey: ['capacity'], queryFn: getCapacity, refetchInterval: 5000 });
}

export function usePlan(product: string, version: string) {
  return useMutation({ mutationFn: (options: unknown) => planLaunch(product, version, options) });
}
