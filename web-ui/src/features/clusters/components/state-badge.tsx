import { Badge, type BadgeTone } from '@/components/ui/badge';

const TONES: Record<string, BadgeTone> = {
  RUNNING: 'success',
  SUCCEEDED: 'success',
  FAILED: 'danger',
  KILLED: 'neutral',
  DESTROYED: 'neutral',
};

export function StateBadge({ state }: { state: string }) {
  return <Badge tone={TONES[state] ?? 'warning'}>{state}</Badge>;
}
