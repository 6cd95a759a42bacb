// A table's box that scrolls sideways when the table is wider than the screen (a phone). The box
// takes the keyboard's focus, so the columns out of view can be scrolled to without a mouse
// (axe's scrollable-region-focusable), and is named for the table it holds.
import type { ReactNode } from 'react';

export const TableScroll = ({ label, children }: { label: string; children: ReactNode }) => (
  <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
    {children}
  </div>
);
