/** Small pieces every page uses: loading data, showing what went wrong, paging. */
import { TrellisApiError } from '@trellis/sdk';
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';

/** What went wrong, as messages for people: the server's own, or why it could not be asked. */
export function messagesOf(error: unknown): string[] {
  if (error instanceof TrellisApiError) return error.messages;
  if (error instanceof Error) {
    return error.name === 'TypeError'
      ? ['Trellis could not be reached. Check your connection, then try again.']
      : [error.message];
  }
  return [String(error)];
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Every item of a list read page by page (the SDK's `client.all`), in order. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** Loads with `load` whenever `keys` change; `reload()` loads again. */
export function useLoad<T>(load: () => Promise<T>, keys: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((before) => ({ ...before, loading: true }));
    load().then(
      (data) => current && setState({ data, error: undefined, loading: false }),
      (error: unknown) => current && setState({ data: undefined, error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...keys, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { ...state, reload };
}

/**
 * A list read newest first a page at a time after a cursor (the last item's id): the first page
 * loads with `keys` (the filters), each older one on `loadOlder`, whose failure is `problems`;
 * `restart` forgets the older pages, as new filters must.
 */
export function useCursorPages<T extends { id: string }>(
  page: (after?: string) => Promise<T[]>,
  keys: unknown[],
  pageSize: number,
) {
  const [older, setOlder] = useState<{ items: T[]; last: boolean } | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const first = useLoad(() => page(), keys);
  const items = [...(first.data ?? []), ...(older?.items ?? [])];
  const last = older ? older.last : (first.data?.length ?? 0) < pageSize;
  const loadOlder = async () => {
    setProblems([]);
    try {
      const next = await page(items.at(-1)?.id);
      setOlder({ items: [...(older?.items ?? []), ...next], last: next.length < pageSize });
    } catch (error) {
      setProblems(messagesOf(error));
    }
  };
  return { first, items, last, problems, loadOlder, restart: () => setOlder(null) };
}

/**
 * The foot of a list paged by {@link useCursorPages}: why the last older page failed, then the
 * button that loads the next one (`label`), or, once the oldest item is shown, `oldest` (if given).
 */
export function OlderPager({
  pages,
  label,
  oldest,
}: {
  pages: { last: boolean; problems: string[]; loadOlder: () => Promise<void> };
  label: string;
  oldest?: string;
}) {
  return (
    <>
      <Problems messages={pages.problems} />
      {pages.last ? (
        oldest !== undefined && <p class="muted pager-count">{oldest}</p>
      ) : (
        <p class="pager">
          <button type="button" onClick={() => void pages.loadOlder()}>
            {label}
          </button>
        </p>
      )}
    </>
  );
}

/** Messages in an alert region (read out when they appear). */
export function Problems({ messages, title }: { messages: string[]; title?: string }) {
  if (messages.length === 0) return null;
  return (
    <div class="problems" role="alert">
      {title && <p class="problems-title">{title}</p>}
      <ul>
        {messages.map((message, index) => (
          <li key={index}>{message}</li>
        ))}
      </ul>
    </div>
  );
}

/** The loading state, the error, or the content. */
export function Loading<T>({
  loaded,
  children,
}: {
  loaded: Loaded<T>;
  children: (data: T) => ComponentChildren;
}) {
  if (loaded.error !== undefined) return <Problems messages={messagesOf(loaded.error)} />;
  if (loaded.data === undefined)
    return (
      <p class="muted" role="status">
        Loading…
      </p>
    );
  return <>{children(loaded.data)}</>;
}

export interface PagerProps {
  page: number;
  totalPages: number;
  totalCount: number;
  label: string;
  onPage: (page: number) => void;
}

export function Pager({ page, totalPages, totalCount, label, onPage }: PagerProps) {
  if (totalPages <= 1) return <p class="muted pager-count">{countOf(totalCount)}</p>;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span aria-live="polite">
        Page {page} of {totalPages} ({countOf(totalCount)})
      </span>
      <button type="button" disabled={page >= totalPages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

const countOf = (count: number) => `${count} ${count === 1 ? 'item' : 'items'}`;

/** The first characters of an id, enough to tell runs apart in a list. */
export const shortId = (id: string) => id.slice(0, 8);
