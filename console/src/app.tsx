/** The console's frame: sign-in, the header with its navigation, and the page for the path. */
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApprovalsPage } from './pages/approvals.js';
import { DecidePage } from './pages/decide.js';
import { EditorPage } from './pages/editor.js';
import { RunPage } from './pages/run.js';
import { SignInPage } from './pages/sign-in.js';
import { WorkflowPage } from './pages/workflow.js';
import { WorkflowsPage } from './pages/workflows.js';
import { Link, match, navigate, usePath } from './router.js';
import {
  canUseWorkflows,
  expiredNotice,
  forgetSession,
  restoreSession,
  type Session,
} from './session.js';
import { callbackPath, finishSingleSignOn } from './single-sign-on.js';

/** The Temporal UI's list of the namespace's workflows, as the server put it in the page. */
const temporalWorkflows =
  document.querySelector<HTMLMetaElement>('meta[name="trellis-temporal-ui"]')?.content || null;

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [notice, setNotice] = useState<string | null>(null);
  const path = usePath();
  useEffect(() => {
    // Back from the provider's sign-in page: finish that sign-in rather than restore a session.
    if (match(callbackPath, path)) {
      finishSingleSignOn().then(
        ({ session: started, returnTo }) => {
          setSession(started);
          navigate(returnTo, { replace: true });
        },
        (error: unknown) => {
          setNotice((error as Error).message);
          setSession(null);
          navigate('/', { replace: true });
        },
      );
      return;
    }
    void restoreSession().then((restored) => {
      if (restored !== null && 'expired' in restored) {
        setNotice(restored.expired);
        setSession(null);
      } else setSession(restored);
    });
  }, []);
  // A single sign-on session ends with its token: say so, and offer signing in again.
  useEffect(() => {
    const expires = session?.expires;
    if (!expires) return;
    const timer = setTimeout(
      () => {
        forgetSession();
        setNotice(expiredNotice(expires.provider));
        setSession(null);
      },
      Math.min(expires.at - Date.now(), 2 ** 31 - 1),
    );
    return () => clearTimeout(timer);
  }, [session]);
  // An approval link's page needs no sign-in: the link's token is the credential.
  const link = match('/decide/:token', path);
  if (link?.token) return <DecidePage token={link.token} />;
  if (session === undefined)
    return (
      <p class="muted" role="status">
        Loading…
      </p>
    );
  if (session === null) {
    return (
      <SignInPage
        notice={notice}
        onSignedIn={(started) => {
          setSession(started);
          if (location.pathname === '/ui' || location.pathname === '/ui/')
            navigate('/workflows', { replace: true });
        }}
      />
    );
  }
  const signOut = () => {
    forgetSession();
    setNotice(null);
    setSession(null);
  };
  return (
    <>
      <a class="skip" href="#main">
        Skip to the page
      </a>
      <Header session={session} onSignOut={signOut} />
      {canUseWorkflows(session.user) ? (
        <Page session={session} />
      ) : (
        <main id="main">
          <h1>Nothing here for your roles</h1>
          <p>
            You are signed in as {session.user.name} with the roles {session.user.roles.join(', ')}.
            The console's pages (workflows, runs, approvals) need the <strong>workflow</strong> or{' '}
            <strong>admin</strong> role.
          </p>
        </main>
      )}
    </>
  );
}

function Header({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const path = usePath();
  const section = path.startsWith('/approvals') ? 'approvals' : 'workflows';
  return (
    <header class="top">
      <Link to="/workflows" class="brand">
        Trellis
      </Link>
      {canUseWorkflows(session.user) && (
        <nav aria-label="Console">
          <Link to="/workflows" aria-current={section === 'workflows' ? 'page' : undefined}>
            Workflows
          </Link>
          <Link to="/approvals" aria-current={section === 'approvals' ? 'page' : undefined}>
            Approvals
          </Link>
        </nav>
      )}
      <div class="who">
        <span>
          {session.user.name} <span class="roles">({session.user.roles.join(', ')})</span>
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </div>
    </header>
  );
}

function Page({ session }: { session: Session }) {
  const path = usePath();
  const { client } = session;
  // The page's title follows the page, for tabs, history and screen readers.
  let found: { title: string; page: VNode } | undefined;
  if (path === '/' || path === '/workflows')
    found = { title: 'Workflows', page: <WorkflowsPage client={client} /> };
  else if (path === '/workflows/new')
    found = { title: 'New workflow', page: <EditorPage client={client} workflowId={null} /> };
  else if (path === '/approvals')
    found = { title: 'Approvals', page: <ApprovalsPage client={client} /> };
  else {
    const edit = match('/workflows/:workflowId/edit', path);
    const run = match('/workflows/:workflowId/runs/:executionId', path);
    const workflow = match('/workflows/:workflowId', path);
    if (edit?.workflowId) {
      found = {
        title: 'Edit workflow',
        page: <EditorPage key={edit.workflowId} client={client} workflowId={edit.workflowId} />,
      };
    } else if (run?.workflowId && run.executionId) {
      found = {
        title: 'Run',
        page: (
          <RunPage
            key={run.executionId}
            client={client}
            workflowId={run.workflowId}
            executionId={run.executionId}
            temporalWorkflows={temporalWorkflows}
          />
        ),
      };
    } else if (workflow?.workflowId) {
      found = {
        title: 'Workflow',
        page: (
          <WorkflowPage
            key={workflow.workflowId}
            client={client}
            workflowId={workflow.workflowId}
          />
        ),
      };
    }
  }
  useEffect(() => {
    document.title = `${found?.title ?? 'Not found'} · Trellis`;
  }, [found?.title]);
  return (
    found?.page ?? (
      <main id="main">
        <h1>Not found</h1>
        <p>
          The console has no page at this address. <Link to="/workflows">Go to the workflows</Link>.
        </p>
      </main>
    )
  );
}
