import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';

import { aCluster } from '@/testing/clusters';

import { canOpenTerminal } from '../lib/terminal';
import { MemberTable } from './member-table';

const placed = aCluster().members[0]!;
const unplaced = { ...placed, member_id: 'c-1-server-2', node: null, ip: null };

describe('MemberTable terminals', () => {
  it('offers a terminal in each placed member of a running cluster, and says which was asked for', () => {
    const open = vi.fn();
    render(
      <MemberTable members={[placed, unplaced]} canOpenTerminal={(m) => canOpenTerminal('RUNNING', m)} onOpenTerminal={open} />,
    );
    expect(screen.getByRole('columnheader', { name: 'Shell' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Open a terminal in c-1-server-2' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Open a terminal in c-1-server-1' }));
    expect(open).toHaveBeenCalledWith('c-1-server-1');
  });

  it('offers none where there is no container, nor without the callbacks', () => {
    const { unmount } = render(
      <MemberTable members={[placed]} canOpenTerminal={(m) => canOpenTerminal('DESTROYING', m)} onOpenTerminal={vi.fn()} />,
    );
    expect(screen.queryByRole('button', { name: /terminal/i })).toBeNull();
    unmount();
    render(<MemberTable members={[placed]} />);
    expect(screen.queryByRole('columnheader', { name: 'Shell' })).toBeNull();
  });
});
