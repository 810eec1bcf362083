import { useMutation, useQuery } from '@tanstack/react-query';

import { getCapacity, getProduct, getProducts, planLaunch } from '../api/catalog';

export function useProducts() {
  return useQuery({ queryKey: ['products'], queryFn: getProducts });
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
