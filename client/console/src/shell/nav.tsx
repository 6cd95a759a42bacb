// The navigation: the pages by group, a column beside the page on a wide screen and one
// scrolling row under the header on a phone (styles.css), every link reachable at every width.
import { NavLink } from '@mantine/core';
import { Fragment } from 'react';
import { navigate, usePath } from '../router.ts';

export interface NavPage {
  path: string;
  title: string;
  group: string;
}

export const Nav = ({ pages }: { pages: readonly NavPage[] }) => {
  const path = usePath();
  const groups = [...new Set(pages.map((page) => page.group))];
  return (
    <nav className="shell-nav" aria-label="Pages">
      {groups.map((group) => (
        <Fragment key={group}>
          <p className="shell-nav-group" aria-hidden="true">
            {group}
          </p>
          {pages
            .filter((page) => page.group === group)
            .map((page) => (
              <NavLink
                key={page.path}
                href={`/app${page.path}`}
                label={page.title}
                active={path === page.path}
                aria-current={path === page.path ? 'page' : undefined}
                className="shell-nav-link"
                onClick={(event) => (event.preventDefault(), navigate(page.path))}
              />
            ))}
        </Fragment>
      ))}
    </nav>
  );
};
