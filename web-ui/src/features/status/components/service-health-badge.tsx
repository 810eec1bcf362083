import { Badge, type BadgeTone } from '@/components/ui/badge';
import type { ServiceHealth } from '@/lib/api/types';

const TONES: Record<ServiceHealth, BadgeTone> = {
  passing: 'success',
  warning: 'warning',
  critical: 'danger',
  missing: 'neutral',
};

/** Consul health of one service as a coloured badge. */
export function ServiceHealthBadge({ health }: { health: ServiceHealth }) {
  return <Badge tone={TONES[health]}>{health}</Badge>;
}
