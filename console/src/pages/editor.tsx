/**
 * Adding or changing a workflow: its definition as JSON text in a code editor, checked as it is
 * typed against the served definition schema (each task's parameters typed by its plugin, the
 * installed plugins) and the graph rules, the problems underlined in the text and listed by line
 * beside it, and the graph drawn as far as it reads, before anything is saved. The editor
 * completes keys, plugin names and parameters and describes the key under the pointer, from the
 * same schema. What only the server can check (configurations, expressions) comes back from the
 * save as its 400 messages, shown the same way until the text changes.
 */
import type { EditorView } from '@codemirror/view';
import { TrellisApiError, type TrellisClient } from '@trellis/sdk';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type * as CodeEditorModule from '../components/code-editor.js';
import type { Diagnostic } from '../components/code-editor.js';
import { Loading, messagesOf, useLoad } from '../components/common.js';
import { DagView } from '../components/dag-view.js';
import { parseDefinitionText } from '../definition.js';
import { Link, navigate } from '../router.js';
import { definitionChecker, placedProblem, type Problem } from '../validation.js';

const starter = `{
  "name": "",
  "description": "",
  "inputs": {},
  "tasks": [
    {
      "name": "Hello",
      "type": { "plugin": "Flow/Log" },
      "parameters": { "message": "Hello!" }
    }
  ]
}
`;

export function EditorPage({
  client,
  workflowId,
}: {
  client: TrellisClient;
  workflowId: string | null;
}) {
  const loaded = useLoad(async () => {
    const schema = (await client.GET('/schemas/workflow-definition.json')) as Record<
      string,
      unknown
    >;
    const stored = workflowId
      ? await client.GET('/workflows/{workflowId}', { params: { path: { workflowId } } })
      : null;
    // CodeMirror is most of the console's code: loaded when an editor is opened.
    const codeEditor = await import('../components/code-editor.js');
    return { schema, stored, codeEditor };
  }, [workflowId]);
  return (
    <main id="main">
      <Loading loaded={loaded}>
        {({ schema, stored, codeEditor }) => (
          <Editor
            client={client}
            workflowId={workflowId}
            schema={schema}
            codeEditor={codeEditor}
            initial={stored ? stored.workflow : starter}
            saved={stored ? stored.workflow : null}
            title={stored ? `Edit ${stored.name}` : 'New workflow'}
          />
        )}
      </Loading>
    </main>
  );
}

interface EditorProps {
  client: TrellisClient;
  workflowId: string | null;
  schema: Record<string, unknown>;
  /** The CodeMirror components, loaded with the page. */
  codeEditor: typeof CodeEditorModule;
  initial: string;
  /** The stored definition, to compare the text with; null for a new workflow. */
  saved: string | null;
  title: string;
}

function Editor({ client, workflowId, schema, codeEditor, initial, saved, title }: EditorProps) {
  const { CodeEditor, TextComparison, definitionAssist } = codeEditor;
  const check = useMemo(() => definitionChecker(schema), [schema]);
  const assist = useMemo(() => definitionAssist(schema), [schema, definitionAssist]);
  const [text, setText] = useState(initial);
  const [checked, setChecked] = useState(() => ({ text: initial, problems: check(initial) }));
  // What the server refused, for the text it refused: said until the text changes.
  const [refusal, setRefusal] = useState<{ text: string; problems: Problem[] } | null>(null);
  // The contract check's verdict on the text it refused (a breaking change of the workflow's
  // inputs or outputs): said until the text changes, and that text may be saved anyway.
  const [verdict, setVerdict] = useState<{ text: string; breaks: ContractBreak[] } | null>(null);
  const [saving, setSaving] = useState(false);
  const [comparing, setComparing] = useState(false);
  const view = useRef<EditorView | null>(null);
  const problemsList = useRef<HTMLDivElement>(null);
  const verdictPanel = useRef<HTMLElement>(null);

  // Checked a moment after typing stops, not at every key.
  useEffect(() => {
    if (checked.text === text) return;
    const timer = setTimeout(() => setChecked({ text, problems: check(text) }), 250);
    return () => clearTimeout(timer);
  }, [text, check, checked.text]);
  const problems = checked.problems;
  const serverProblems = refusal !== null && refusal.text === text ? refusal.problems : [];
  const breaks = verdict !== null && verdict.text === text ? verdict.breaks : [];
  const definition = useMemo(() => parseDefinitionText(checked.text), [checked.text]);
  const diagnostics = useMemo(
    () => [
      ...(checked.text === text ? problems.map(diagnosticOf) : []),
      ...serverProblems.filter((problem) => problem.line !== null).map(diagnosticOf),
      ...breaks
        .filter(({ problem }) => problem.line !== null)
        .map(({ problem }) => diagnosticOf(problem)),
    ],
    [checked, refusal, verdict, text],
  );

  const save = async (event: Event, acceptBreaking = false) => {
    event.preventDefault();
    const now = check(text);
    setChecked({ text, problems: now });
    setRefusal(null);
    setVerdict(null);
    if (now.length > 0) {
      problemsList.current?.focus();
      return;
    }
    setSaving(true);
    try {
      const id = workflowId
        ? (await client.PUT('/workflows/{workflowId}', {
            params: {
              path: { workflowId },
              ...(acceptBreaking ? { query: { acceptBreaking } } : {}),
            },
            body: { workflowId, definition: text },
          }),
          workflowId)
        : (await client.POST('/workflows/Add', { body: { definition: text } })).id;
      navigate(`/workflows/${id}`);
    } catch (error) {
      const found = contractBreaks(text, error);
      setSaving(false);
      if (found.length > 0) {
        setVerdict({ text, breaks: found });
        // Drawn by the next render: focused then, so that it is read out first.
        setTimeout(() => verdictPanel.current?.focus());
        return;
      }
      setRefusal({ text, problems: refusedProblems(text, error) });
      problemsList.current?.focus();
    }
  };

  /** Puts the cursor at a problem's place. */
  const goTo = (problem: Problem) => {
    const editor = view.current;
    if (!editor || problem.line === null) return;
    const anchor = Math.min(problem.from, editor.state.doc.length);
    editor.dispatch({ selection: { anchor }, scrollIntoView: true });
    editor.focus();
  };
  const listed = (problem: Problem, key: string) => (
    <li key={key}>
      <ProblemText problem={problem} goTo={goTo} />
    </li>
  );

  const count = problems.length + serverProblems.length;
  return (
    <>
      <div class="page-head">
        <div>
          <p class="crumbs">
            <Link to="/workflows">Workflows</Link> /
          </p>
          <h1>{title}</h1>
        </div>
      </div>
      <form class="editor" onSubmit={(event) => void save(event)}>
        <div class="editor-text">
          <p class="editor-label" id="definition-label">
            Definition (JSON)
          </p>
          <CodeEditor
            value={text}
            onChange={setText}
            label="Definition (JSON)"
            diagnostics={diagnostics}
            extensions={assist}
            viewRef={view}
          />
          <p class="hint">
            Checked as you type against{' '}
            <a href="/schemas/workflow-definition.json">the definition schema</a> of this server.
            Ctrl-Space completes keys, plugins and parameters; Ctrl-Shift-M lists the problems.
          </p>
        </div>
        <div class="editor-side">
          <div
            id="definition-problems"
            class="editor-problems"
            ref={problemsList}
            tabIndex={-1}
            aria-live="polite"
          >
            {count === 0 && breaks.length > 0 ? (
              <p>
                No problems in the text, but the contract check refused to save it:{' '}
                <a href="#contract-verdict">its verdict</a> is below.
              </p>
            ) : count === 0 ? (
              <p class="ok">No problems found.</p>
            ) : (
              <>
                <p class="problems-title">
                  {count === 1 ? '1 problem' : `${count} problems`}
                  {serverProblems.length > 0 ? ' (the server refused to save)' : ''}:
                </p>
                <ul class="problem-list">
                  {problems.map((problem, index) => listed(problem, `c${index}`))}
                  {serverProblems.map((problem, index) => listed(problem, `s${index}`))}
                </ul>
              </>
            )}
          </div>
          <h2>Graph</h2>
          {definition ? (
            <DagView definition={definition} label="Tasks of the definition being edited" />
          ) : (
            <p class="muted">The graph is drawn once the text is a JSON object.</p>
          )}
        </div>
        {breaks.length > 0 && (
          <ContractVerdict
            breaks={breaks}
            panel={verdictPanel}
            saving={saving}
            goTo={goTo}
            onAccept={(event) => void save(event, true)}
            onKeepEditing={() => view.current?.focus()}
          />
        )}
        <div class="editor-actions">
          <button type="submit" class="primary" disabled={saving}>
            {saving ? 'Saving…' : workflowId ? 'Save changes' : 'Add workflow'}
          </button>
          {saved !== null && (
            <button
              type="button"
              aria-expanded={comparing}
              aria-controls="definition-changes"
              onClick={() => setComparing(!comparing)}
            >
              {comparing ? 'Hide changes' : 'Compare with saved'}
            </button>
          )}
          <Link to={workflowId ? `/workflows/${workflowId}` : '/workflows'} class="button">
            Cancel
          </Link>
        </div>
      </form>
      {saved !== null && comparing && (
        <section id="definition-changes" aria-labelledby="definition-changes-heading">
          <h2 id="definition-changes-heading">Changes from the saved definition</h2>
          <TextComparison
            before={saved}
            after={text}
            beforeLabel="Saved definition"
            afterLabel="Definition being edited"
          />
        </section>
      )}
    </>
  );
}

/** A break of the workflow's contract the server refused, with the known callers it breaks. */
interface ContractBreak {
  /** The change, placed in the text at its path (`inputs.amount`). */
  problem: Problem;
  /** Each known caller it breaks and how: `task 'Charge' of workflow "Checkout" gives it 2.5`. */
  callers: string[];
}

/**
 * The breaks of a save the contract check refused (409 `workflow.breaking_change`, each followed
 * by its `workflow.broken_caller` errors); none for any other answer.
 */
function contractBreaks(text: string, error: unknown): ContractBreak[] {
  if (!(error instanceof TrellisApiError) || error.status !== 409) return [];
  const breaks: ContractBreak[] = [];
  for (const detail of error.errors) {
    const message = detail.message.replace(`${detail.path ?? ''}: `, '');
    if (detail.code === 'workflow.breaking_change') {
      // The way out the API's message gives is the button here.
      const change = message.replace(/, or send the update again with acceptBreaking=true.*$/, '');
      breaks.push({ problem: placedProblem(text, detail.path, change), callers: [] });
    } else if (detail.code === 'workflow.broken_caller') {
      const last = breaks.at(-1);
      if (last && last.problem.path === placedProblem(text, detail.path, '').path) {
        last.callers.push(message);
      } else {
        breaks.push({
          problem: placedProblem(text, detail.path, 'breaks a caller'),
          callers: [message],
        });
      }
    }
  }
  return breaks;
}

interface ContractVerdictProps {
  breaks: ContractBreak[];
  panel: { current: HTMLElement | null };
  saving: boolean;
  goTo: (problem: Problem) => void;
  onAccept: (event: Event) => void;
  onKeepEditing: () => void;
}

/** A problem as a line of a list: a button to its line (where it has one), its path, its message. */
function ProblemText({ problem, goTo }: { problem: Problem; goTo: (problem: Problem) => void }) {
  return (
    <>
      {problem.line !== null && (
        <>
          <button type="button" class="link" onClick={() => goTo(problem)}>
            Line {problem.line}
          </button>{' '}
        </>
      )}
      {problem.path && <code>{problem.path}</code>} {problem.message}
    </>
  );
}

/**
 * The contract check's verdict: each break of the declared inputs and outputs, the callers each
 * one breaks, and the choice of saving anyway (`acceptBreaking`).
 */
function ContractVerdict({
  breaks,
  panel,
  saving,
  goTo,
  onAccept,
  onKeepEditing,
}: ContractVerdictProps) {
  const named = breaks.some((found) => found.callers.length > 0);
  return (
    <section
      id="contract-verdict"
      class="verdict"
      aria-labelledby="verdict-heading"
      tabIndex={-1}
      ref={panel}
    >
      <h2 id="verdict-heading">Not saved: the change breaks this workflow’s contract</h2>
      <p>
        {breaks.length === 1 ? 'One change' : `${breaks.length} changes`} to its declared inputs or
        outputs would make{' '}
        {named ? 'the callers listed under each fail' : 'its callers fail as they call it today'}.
        Change the definition back, or save it anyway and change the callers after.
      </p>
      <ol class="verdict-breaks">
        {breaks.map(({ problem, callers }, index) => (
          <li key={index}>
            <ProblemText problem={problem} goTo={goTo} />
            {callers.length > 0 && (
              <>
                <p class="verdict-callers">Breaks:</p>
                <ul>
                  {callers.map((caller) => (
                    <li key={caller}>{caller}</li>
                  ))}
                </ul>
              </>
            )}
          </li>
        ))}
      </ol>
      <div class="actions">
        <button type="button" class="danger" disabled={saving} onClick={onAccept}>
          Save anyway, breaking its callers
        </button>
        <button type="button" onClick={onKeepEditing}>
          Keep editing
        </button>
      </div>
    </section>
  );
}

/** A refused save's problems, each placed in the text by its path where it has one. */
function refusedProblems(text: string, error: unknown): Problem[] {
  if (!(error instanceof TrellisApiError) || error.errors.length === 0) {
    return messagesOf(error).map((message) => placedProblem(text, undefined, message));
  }
  // The server's messages start with their path, which the list shows on its own.
  return error.errors.map((detail) =>
    placedProblem(text, detail.path, detail.message.replace(`${detail.path ?? ''}: `, '')),
  );
}

function diagnosticOf(problem: Problem): Diagnostic {
  return {
    from: problem.from,
    to: problem.to,
    severity: 'error',
    message: problem.path ? `${problem.path}: ${problem.message}` : problem.message,
  };
}
