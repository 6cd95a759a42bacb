// The signed-out pages' frame: the page centred on the app's background, the theme switch in
// its corner and the service's status under it.
import type { ReactNode } from 'react';
import { ColorSchemeToggle } from './color-scheme-toggle.tsx';

export const PublicLayout = ({ status, children }: { status: ReactNode; children: ReactNode }) => (
  <div className="public-layout">
    <div className="public-layout-toggle">
      <ColorSchemeToggle />
    </div>
    <main className="public-layout-main">{children}</main>
    <footer className="public-layout-status">{status}</footer>
  </div>
);
