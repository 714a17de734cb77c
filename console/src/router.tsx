/**
 * Client-side routes under `/ui` (the server answers every `/ui/...` path with the console's
 * page): the History API, and links that navigate without a reload while staying real links
 * (open in a new tab, copy, middle-click).
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const base = '/ui';

const listeners = new Set<() => void>();
const current = () => location.pathname.slice(base.length) || '/';

/** The path within the console (`/workflows/...`), kept current. */
export function usePath(): string {
  const [path, setPath] = useState(current);
  useEffect(() => {
    const update = () => setPath(current());
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

/** Goes to a console path (`/approvals`) without reloading the page. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = base + to;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  scrollTo(0, 0);
  for (const listener of listeners) listener();
}

interface LinkProps {
  /** A console path: `/workflows/...`. */
  to: string;
  children: ComponentChildren;
  class?: string;
  'aria-current'?: 'page' | undefined;
  'aria-label'?: string;
}

export function Link({ to, children, ...rest }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
      return;
    }
    event.preventDefault();
    navigate(to);
  };
  return (
    <a {...rest} href={base + to} onClick={onClick}>
      {children}
    </a>
  );
}

/** Matches `path` against `pattern` (`/workflows/:id`); the named parts, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const names: string[] = [];
  const source = pattern.replace(/:(\w+)/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  const found = new RegExp(`^${source}/?$`).exec(path);
  if (!found) return null;
  return Object.fromEntries(
    names.map((name, index) => [name, decodeURIComponent(found[index + 1] ?? '')]),
  );
}
