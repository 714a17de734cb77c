/**
 * CodeMirror 6 in Preact: a JSON editor whose text is the page's state (typing calls `onChange`;
 * a new `value` replaces the text), with the page's problems as diagnostics (underlined, in the
 * gutter, and in the lint panel: Ctrl-Shift-M, F8 to the next), and a read-only side-by-side
 * comparison of two texts.
 *
 * Each is mounted in a shadow root: CodeMirror writes its styles at run time, which the console's
 * Content-Security-Policy (`style-src 'self'`) refuses as a `<style>` element in the page but
 * allows as a shadow root's constructed style sheet. The page's CSS reaches in only through
 * custom properties (`--editor-height`).
 */
import type { CompletionSource } from '@codemirror/autocomplete';
import { json, jsonLanguage } from '@codemirror/lang-json';
import { Chunk, goToNextChunk, goToPreviousChunk, MergeView } from '@codemirror/merge';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { EditorState, Text, type Extension } from '@codemirror/state';
import { EditorView, hoverTooltip } from '@codemirror/view';
import { basicSetup, minimalSetup } from 'codemirror';
import { useEffect, useRef } from 'preact/hooks';
import { completionsAt, helpAt } from '../definition-completion.js';

export type { Diagnostic };

interface CodeEditorProps {
  value: string;
  onChange: (text: string) => void;
  /** The accessible name of the editable text. */
  label: string;
  diagnostics: readonly Diagnostic[];
  /** Completion, hover help: fixed when the editor is made. */
  extensions?: Extension[];
  /** Receives the editor view, to move its cursor. */
  viewRef?: { current: EditorView | null };
}

export function CodeEditor({
  value,
  onChange,
  label,
  diagnostics,
  extensions = [],
  viewRef,
}: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const changed = useRef(onChange);
  changed.current = onChange;
  // Texts the editor reported since the page's state last caught up with it: a render may come
  // with one of these after more was typed, and must not put it back.
  const reported = useRef(new Set<string>());

  useEffect(() => {
    if (!host.current) return;
    const editor = new EditorView({
      ...shadowMount(host.current),
      state: EditorState.create({
        doc: value,
        extensions: [
          basicSetup,
          json(),
          lintGutter(),
          look,
          contentAttributes(label),
          EditorView.updateListener.of((update) => {
            if (!update.docChanged) return;
            const text = update.state.doc.toString();
            reported.current.add(text);
            changed.current(text);
          }),
          ...extensions,
        ],
      }),
    });
    view.current = editor;
    if (viewRef) viewRef.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
      if (viewRef) viewRef.current = null;
    };
    // Made once; the text and the diagnostics follow in the effects below.
  }, []);

  useEffect(() => {
    const editor = view.current;
    if (!editor) return;
    if (editor.state.doc.toString() === value) reported.current.clear();
    else if (!reported.current.has(value)) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    }
  }, [value]);

  useEffect(() => {
    const editor = view.current;
    if (editor) editor.dispatch(setDiagnostics(editor.state, [...diagnostics]));
  }, [diagnostics]);

  return <div class="code-editor" ref={host} />;
}

interface TextComparisonProps {
  before: string;
  after: string;
  beforeLabel: string;
  afterLabel: string;
  /** Buttons that move the cursor of the second text to its previous and next change. */
  stepper?: boolean;
}

/**
 * Two texts side by side, each under its label, their changes marked; stacked, the first above
 * the second, in a narrow box (a phone). Neither can be edited.
 */
export function TextComparison({
  before,
  after,
  beforeLabel,
  afterLabel,
  stepper = false,
}: TextComparisonProps) {
  const host = useRef<HTMLDivElement>(null);
  const shown = useRef<MergeView | null>(null);
  useEffect(() => {
    if (!host.current) return;
    const side = (doc: string, label: string) => ({
      doc,
      // No gutters: measured inside the merge view's own scroller, their lines come out shorter
      // than the text's.
      extensions: [
        minimalSetup,
        json(),
        EditorState.readOnly.of(true),
        EditorView.editable.of(false),
        contentAttributes(label),
      ],
    });
    const mount = shadowMount(host.current);
    mount.root.adoptedStyleSheets = [...mount.root.adoptedStyleSheets, comparisonLook()];
    const merge = new MergeView({
      a: side(before, beforeLabel),
      b: side(after, afterLabel),
      ...mount,
      gutter: false,
    });
    for (const [view, label] of [
      [merge.a, beforeLabel],
      [merge.b, afterLabel],
    ] as const) {
      const caption = document.createElement('div');
      caption.className = 'side-label';
      caption.textContent = label;
      view.dom.before(caption);
    }
    shown.current = merge;
    return () => {
      shown.current = null;
      merge.destroy();
    };
  }, [before, after, beforeLabel, afterLabel]);
  // The cursor goes to the change in the second text, which then has the focus: read from there.
  const step = (command: typeof goToNextChunk) => {
    const view = shown.current?.b;
    if (!view) return;
    command(view);
    view.focus();
  };
  return (
    <>
      {stepper && (
        <div class="actions comparison-steps">
          <button type="button" onClick={() => step(goToPreviousChunk)}>
            Previous change
          </button>
          <button type="button" onClick={() => step(goToNextChunk)}>
            Next change
          </button>
        </div>
      )}
      <div class="text-comparison" ref={host} />
    </>
  );
}

let comparisonSheet: CSSStyleSheet | null = null;

/** The labels above each side, and the sides stacked when the box is narrow. */
function comparisonLook(): CSSStyleSheet {
  if (comparisonSheet) return comparisonSheet;
  comparisonSheet = new CSSStyleSheet();
  comparisonSheet.replaceSync(`
    :host { container-type: inline-size; display: block; }
    .side-label {
      font: 600 0.85rem system-ui, sans-serif;
      padding: 4px 8px;
      border-bottom: 1px solid var(--code-line, #c9d1dc);
      background: var(--code-paper, #fff);
      color: var(--code-ink, #1b2330);
    }
    .cm-mergeViewEditor + .cm-mergeViewEditor .side-label { border-left: 1px solid var(--code-line, #c9d1dc); }
    @container (max-width: 600px) {
      .cm-mergeViewEditors { flex-direction: column !important; }
      .cm-mergeViewEditor { flex-basis: auto !important; }
      .cm-mergeViewEditor + .cm-mergeViewEditor { border-top: 2px solid var(--code-line, #c9d1dc); }
      .cm-mergeViewEditor + .cm-mergeViewEditor .side-label { border-left: none; }
    }
  `);
  return comparisonSheet;
}

/** How two texts differ: the changed places, and the lines of each they mark (as a comparison does). */
export function changesBetween(
  before: string,
  after: string,
): { places: number; removed: number; added: number } {
  const a = Text.of(before.split('\n'));
  const b = Text.of(after.split('\n'));
  const lines = (doc: Text, from: number, to: number, end: number) =>
    from === to ? 0 : doc.lineAt(end).number - doc.lineAt(from).number + 1;
  let removed = 0;
  let added = 0;
  const chunks = Chunk.build(a, b);
  for (const chunk of chunks) {
    removed += lines(a, chunk.fromA, chunk.toA, chunk.endA);
    added += lines(b, chunk.fromB, chunk.toB, chunk.endB);
  }
  return { places: chunks.length, removed, added };
}

/** An empty element in `host`'s shadow root (made at the first call) and that root. */
function shadowMount(host: HTMLElement): { parent: HTMLElement; root: ShadowRoot } {
  const root = host.shadowRoot ?? host.attachShadow({ mode: 'open' });
  const parent = document.createElement('div');
  root.replaceChildren(parent);
  return { parent, root };
}

/**
 * The text's name, and a place in the tab order: a content element that is only contenteditable
 * (or, read-only, not even that) is not counted as focusable, and its scroller would be a region
 * a keyboard cannot reach (axe's scrollable-region-focusable).
 */
const contentAttributes = (label: string) =>
  EditorView.contentAttributes.of({ 'aria-label': label, tabindex: '0' });

const look = EditorView.theme({
  '&': { height: 'var(--editor-height, auto)', fontSize: '14px' },
  '&.cm-focused': { outline: '2px solid var(--focus)' },
  '.cm-scroller': {
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
    lineHeight: '1.45',
  },
  '.definition-help': { maxWidth: '36em', padding: '4px 8px' },
});

/** Completion and hover help from the served definition schema. */
export function definitionAssist(schema: Record<string, unknown>) {
  const complete: CompletionSource = (context) => {
    const found = completionsAt(schema, context.state.doc.toString(), context.pos);
    if (found === null) return null;
    return {
      from: found.from,
      to: found.to,
      options: found.options.map((option) => ({
        label: option.label,
        apply: option.apply,
        type: option.kind === 'plugin' ? 'enum' : 'property',
        ...(option.info === '' ? {} : { info: option.info }),
      })),
      validFor: /^[\w/.$-]*$/,
    };
  };
  return [
    jsonLanguage.data.of({ autocomplete: complete }),
    hoverTooltip((view, pos) => {
      const help = helpAt(schema, view.state.doc.toString(), pos);
      if (help === null) return null;
      return {
        pos: help.from,
        end: help.to,
        create: () => {
          const dom = document.createElement('div');
          dom.className = 'definition-help';
          dom.textContent = help.text;
          return { dom };
        },
      };
    }),
  ];
}
