/**
 * Adding or changing a workflow: its definition as JSON text, checked as it is typed against the
 * served definition schema (each task's parameters typed by its plugin) and the graph rules, the
 * problems listed by line beside it and the graph drawn as far as it reads, before anything is
 * saved. What only the server can check (installed plugins, expressions) comes back from the
 * save as its 400 messages, in the same list.
 */
import { TrellisApiError, type TrellisClient } from '@trellis/sdk';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Loading, messagesOf, useLoad } from '../components/common.js';
import { DagView } from '../components/dag-view.js';
import { parseDefinitionText } from '../definition.js';
import { Link, navigate } from '../router.js';
import { definitionChecker, type Problem } from '../validation.js';

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
    return { schema, stored };
  }, [workflowId]);
  return (
    <main id="main">
      <Loading loaded={loaded}>
        {({ schema, stored }) => (
          <Editor
            client={client}
            workflowId={workflowId}
            schema={schema}
            initial={stored ? stored.workflow : starter}
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
  initial: string;
  title: string;
}

function Editor({ client, workflowId, schema, initial, title }: EditorProps) {
  const check = useMemo(() => definitionChecker(schema), [schema]);
  const [text, setText] = useState(initial);
  const [checked, setChecked] = useState(() => ({ text: initial, problems: check(initial) }));
  const [serverProblems, setServerProblems] = useState<string[]>([]);
  // The text the server refused as a breaking change of its inputs or outputs: it may be saved anyway.
  const [breaking, setBreaking] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const problemsList = useRef<HTMLDivElement>(null);

  // Checked a moment after typing stops, not at every key.
  useEffect(() => {
    if (checked.text === text) return;
    const timer = setTimeout(() => setChecked({ text, problems: check(text) }), 250);
    return () => clearTimeout(timer);
  }, [text, check, checked.text]);
  const problems = checked.problems;
  const definition = useMemo(() => parseDefinitionText(checked.text), [checked.text]);

  const save = async (event: Event, acceptBreaking = false) => {
    event.preventDefault();
    const now = check(text);
    setChecked({ text, problems: now });
    setServerProblems([]);
    setBreaking(null);
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
      setServerProblems(messagesOf(error));
      if (isBreakingChange(error)) setBreaking(text);
      setSaving(false);
      problemsList.current?.focus();
    }
  };

  /** Puts the cursor at a problem's line and column. */
  const goTo = (problem: Problem) => {
    const textarea = area.current;
    if (!textarea || problem.line === null) return;
    const lines = text.split('\n');
    const offset =
      lines.slice(0, problem.line - 1).reduce((sum, line) => sum + line.length + 1, 0) +
      (problem.column ?? 1) -
      1;
    textarea.focus();
    textarea.setSelectionRange(offset, offset);
  };

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
          <label for="definition">Definition (JSON)</label>
          <textarea
            id="definition"
            ref={area}
            value={text}
            rows={28}
            spellcheck={false}
            autoCapitalize="off"
            aria-invalid={count > 0}
            aria-describedby="definition-problems"
            onInput={(event) => setText(event.currentTarget.value)}
          />
          <p class="hint">
            Checked as you type against{' '}
            <a href="/schemas/workflow-definition.json">the definition schema</a> of this server.
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
            {count === 0 ? (
              <p class="ok">No problems found.</p>
            ) : (
              <>
                <p class="problems-title">
                  {count === 1 ? '1 problem' : `${count} problems`}
                  {serverProblems.length > 0 ? ' (the server refused to save)' : ''}:
                </p>
                <ul class="problem-list">
                  {problems.map((problem, index) => (
                    <li key={`c${index}`}>
                      <button type="button" class="link" onClick={() => goTo(problem)}>
                        {problem.line !== null ? `Line ${problem.line}` : 'Definition'}
                      </button>{' '}
                      {problem.path && <code>{problem.path}</code>} {problem.message}
                    </li>
                  ))}
                  {serverProblems.map((message, index) => (
                    <li key={`s${index}`}>{message}</li>
                  ))}
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
        <div class="editor-actions">
          <button type="submit" class="primary" disabled={saving}>
            {saving ? 'Saving…' : workflowId ? 'Save changes' : 'Add workflow'}
          </button>
          {breaking !== null && breaking === text && (
            <button
              type="button"
              class="danger"
              disabled={saving}
              onClick={(event) => void save(event, true)}
            >
              Save anyway, breaking its callers
            </button>
          )}
          <Link to={workflowId ? `/workflows/${workflowId}` : '/workflows'} class="button">
            Cancel
          </Link>
        </div>
      </form>
    </>
  );
}

/** Whether the server refused a save as a breaking change of the workflow's inputs or outputs. */
function isBreakingChange(error: unknown): boolean {
  return (
    error instanceof TrellisApiError &&
    error.status === 409 &&
    error.errors.some((detail) => detail.code === 'workflow.breaking_change')
  );
}
