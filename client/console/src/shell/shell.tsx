// The signed-in frame: header across the top, the status strip under it, the navigation beside
// the page (above it on a phone). Laid out in styles.css: Mantine's AppShell writes its sizes into
// a <style> element, which the console's CSP refuses.
import type { ReactNode } from 'react';
import { Header } from './header.tsx';

export const Shell = ({ nav, status, children }: { nav: ReactNode; status: ReactNode; children: ReactNode }) => (
  <div className="shell">
    <Header />
    <div className="shell-status">{status}</div>
    {nav}
    <main className="shell-main">{children}</main>
  </div>
);
