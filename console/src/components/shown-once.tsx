/**
 * A secret the server shows only once (an API key, a webhook's signing secret): to copy now, as
 * no later page can show it.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

interface ShownOnceProps {
  /** The field's id (unique on the page). */
  id: string;
  title: string;
  /** The field's label. */
  label: string;
  secret: string;
  /** Why it cannot be shown again. */
  children: ComponentChildren;
  /** Its heading's level: 2 (the default) on a page, 3 inside a page's section. */
  level?: 2 | 3;
}

export function ShownOnce({ id, title, label, secret, children, level = 2 }: ShownOnceProps) {
  const Heading = level === 2 ? 'h2' : 'h3';
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    const field = document.getElementById(id) as HTMLInputElement | null;
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied.');
    } catch {
      // Without clipboard access (an insecure origin, a refused permission): selected, to copy.
      field?.select();
      setCopied('Selected: copy it with Ctrl+C or ⌘C.');
    }
  };
  return (
    <section class="new-key" aria-labelledby={`${id}-title`}>
      <Heading id={`${id}-title`}>{title}</Heading>
      <p class="warning" role="alert">
        {children}
      </p>
      <div class="field">
        <label for={id}>{label}</label>
        <div class="copyable">
          <input
            id={id}
            readOnly
            value={secret}
            onFocus={(event) => event.currentTarget.select()}
          />
          <button type="button" onClick={() => void copy()}>
            Copy
          </button>
        </div>
        <p class="hint" role="status">
          {copied}
        </p>
      </div>
    </section>
  );
}
