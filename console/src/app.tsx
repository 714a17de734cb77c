/**
 * The console's frame: sign-in, the header with its navigation and project switcher, and the page
 * for the path.
 */
import type { ComponentChildren, VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiKeysPage } from './pages/api-keys.js';
import { ApprovalsPage } from './pages/approvals.js';
import { AuditPage } from './pages/audit.js';
import { ConfigurationsPage } from './pages/configurations.js';
import { DecidePage } from './pages/decide.js';
import { EditorPage } from './pages/editor.js';
import { ExecutionsPage } from './pages/executions.js';
import { MembersPage } from './pages/members.js';
import { NotificationsPage } from './pages/notifications.js';
import { OverviewPage } from './pages/overview.js';
import { PluginPage, PluginsPage } from './pages/plugins.js';
import { RevisionsPage } from './pages/revisions.js';
import { RunPage } from './pages/run.js';
import { SignInPage } from './pages/sign-in.js';
import { ProjectTriggersPage, TriggerPage, WorkflowTriggersPage } from './pages/triggers.js';
import { WorkflowPage } from './pages/workflow.js';
import { WorkflowsPage } from './pages/workflows.js';
import { Link, match, navigate, usePath } from './router.js';
import {
  canConfigure,
  canManagePlugins,
  canReadAudit,
  canUseWorkflows,
  expiredNotice,
  forgetSession,
  inProject,
  isProjectAdmin,
  restoreSession,
  type ProjectChoice,
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
        }}
      />
    );
  }
  const signOut = () => {
    forgetSession();
    setNotice(null);
    setSession(null);
  };
  // Another project: every page anew in it. A page of one run or workflow belongs to the project
  // left, so the section's list is shown instead.
  const switchProject = (project: ProjectChoice) => {
    setSession(inProject(session, project));
    const section = sectionPath(sectionOf(path));
    if (path !== section) navigate(section, { replace: true });
  };
  return (
    <>
      <a class="skip" href="#main">
        Skip to the page
      </a>
      <Header session={session} onSignOut={signOut} onSwitchProject={switchProject} />
      <Page key={session.project?.id} session={session} />
    </>
  );
}

type Section =
  | 'overview'
  | 'executions'
  | 'workflows'
  | 'triggers'
  | 'approvals'
  | 'configurations'
  | 'plugins'
  | 'notifications'
  | 'members'
  | 'keys'
  | 'audit';

/** The sections named by their path's first part (the workflows' is every other path). */
const namedSections = [
  'executions',
  'triggers',
  'approvals',
  'configurations',
  'plugins',
  'notifications',
  'members',
  'keys',
  'audit',
] as const;

/** The section a path is in; the home (`/`) is the overview. */
const sectionOf = (path: string): Section =>
  path === '/'
    ? 'overview'
    : (namedSections.find((section) => path.startsWith(`/${section}`)) ?? 'workflows');

/** A section's own page: `/` for the overview, `/<section>` for the others. */
const sectionPath = (section: Section) => (section === 'overview' ? '/' : `/${section}`);

interface HeaderProps {
  session: Session;
  onSignOut: () => void;
  onSwitchProject: (project: ProjectChoice) => void;
}

function Header({ session, onSignOut, onSwitchProject }: HeaderProps) {
  const section = sectionOf(usePath());
  const { user } = session;
  const link = (to: Section, label: string) => (
    <Link to={sectionPath(to)} aria-current={section === to ? 'page' : undefined}>
      {label}
    </Link>
  );
  return (
    <header class="top">
      <Link to="/" class="brand">
        Trellis
      </Link>
      <ProjectSwitcher session={session} onSwitch={onSwitchProject} />
      <nav aria-label="Console">
        {canUseWorkflows(user) && link('overview', 'Overview')}
        {canUseWorkflows(user) && link('executions', 'Executions')}
        {canUseWorkflows(user) && link('workflows', 'Workflows')}
        {canUseWorkflows(user) && link('triggers', 'Triggers')}
        {canUseWorkflows(user) && link('approvals', 'Approvals')}
        {canConfigure(user) && link('configurations', 'Configurations')}
        {canManagePlugins(user) && link('plugins', 'Plugins')}
        {isProjectAdmin(user) && link('notifications', 'Notifications')}
        {isProjectAdmin(user) && link('members', 'Members')}
        {isProjectAdmin(user) && link('keys', 'API keys')}
        {canReadAudit(user) && link('audit', 'Audit')}
      </nav>
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

/** The project the console works in: a menu of the user's projects, or its name when one. */
function ProjectSwitcher({
  session,
  onSwitch,
}: {
  session: Session;
  onSwitch: (project: ProjectChoice) => void;
}) {
  const { project } = session;
  const projects = session.user.projects ?? [];
  if (!project) return null;
  if (projects.length <= 1) {
    return (
      <p class="project">
        Project <strong>{project.name}</strong>
      </p>
    );
  }
  return (
    <p class="project">
      <label for="project-switcher">Project</label>
      <select
        id="project-switcher"
        value={project.id}
        onChange={(event) => {
          const chosen = projects.find(({ id }) => id === event.currentTarget.value);
          if (chosen) onSwitch(chosen);
        }}
      >
        {projects.map(({ id, name }) => (
          <option key={id} value={id}>
            {name}
          </option>
        ))}
      </select>
    </p>
  );
}

/** What a page needs that the user lacks in its project. */
function NotForYourRoles({ session, needs }: { session: Session; needs: ComponentChildren }) {
  const { user, project } = session;
  return (
    <main id="main">
      <h1>Nothing here for your roles</h1>
      <p>
        You are signed in as {user.name} with the roles{' '}
        {user.roles.length > 0 ? user.roles.join(', ') : 'none'}
        {project && ` in project ${project.name}`}. {needs}
      </p>
    </main>
  );
}

const workflowsNeed = (
  <>
    The console's pages (workflows, runs, approvals) need the <strong>workflow</strong> or{' '}
    <strong>admin</strong> role.
  </>
);

function Page({ session }: { session: Session }) {
  const path = usePath();
  const { client, user, project } = session;
  const projectName = project?.name ?? 'default';
  const projectKey = project?.id ?? 'default';
  // The page's title follows the page, for tabs, history and screen readers.
  let found: { title: string; page: VNode } | undefined;
  const section = sectionOf(path);
  if ((section === 'members' || section === 'keys') && path === `/${section}`) {
    const title = section === 'members' ? 'Members' : 'API keys';
    if (!isProjectAdmin(user)) {
      found = {
        title,
        page: (
          <NotForYourRoles
            session={session}
            needs={`The ${title.toLowerCase()} page needs the admin role in the project.`}
          />
        ),
      };
    } else if (section === 'members') {
      found = {
        title,
        page: <MembersPage client={client} projectId={projectKey} projectName={projectName} />,
      };
    } else {
      found = {
        title,
        page: <ApiKeysPage client={client} projectId={projectKey} projectName={projectName} />,
      };
    }
  } else if (section === 'audit' && path === '/audit') {
    found = {
      title: 'Audit trail',
      page: canReadAudit(user) ? (
        <AuditPage
          client={client}
          project={project}
          projects={user.instanceAdmin ? (user.projects ?? []) : null}
        />
      ) : (
        <NotForYourRoles
          session={session}
          needs="The audit trail needs the admin role in the project."
        />
      ),
    };
  } else if (section === 'configurations' || section === 'plugins' || section === 'notifications') {
    found = servicePage(session, path);
  } else if (!canUseWorkflows(user)) {
    found = {
      title: 'Nothing here for your roles',
      page: <NotForYourRoles session={session} needs={workflowsNeed} />,
    };
  } else if (path === '/')
    found = { title: 'Overview', page: <OverviewPage client={client} projectName={projectName} /> };
  else if (path === '/executions')
    found = { title: 'Executions', page: <ExecutionsPage client={client} /> };
  else if (path === '/workflows')
    found = { title: 'Workflows', page: <WorkflowsPage client={client} /> };
  else if (path === '/workflows/new')
    found = { title: 'New workflow', page: <EditorPage client={client} workflowId={null} /> };
  else if (path === '/triggers')
    found = { title: 'Triggers', page: <ProjectTriggersPage client={client} /> };
  else if (path === '/approvals')
    found = { title: 'Approvals', page: <ApprovalsPage client={client} /> };
  else {
    const edit = match('/workflows/:workflowId/edit', path);
    const run = match('/workflows/:workflowId/runs/:executionId', path);
    const workflow = match('/workflows/:workflowId', path);
    const triggers = match('/workflows/:workflowId/triggers', path);
    const trigger = match('/workflows/:workflowId/triggers/:triggerId', path);
    const revisions =
      match('/workflows/:workflowId/revisions/:range', path) ??
      match('/workflows/:workflowId/revisions', path);
    if (revisions?.workflowId) {
      found = {
        title: 'Revisions',
        page: (
          <RevisionsPage
            key={revisions.workflowId}
            client={client}
            workflowId={revisions.workflowId}
            range={revisions.range}
          />
        ),
      };
    } else if (triggers?.workflowId) {
      found = {
        title: 'Triggers',
        page: (
          <WorkflowTriggersPage
            key={triggers.workflowId}
            client={client}
            workflowId={triggers.workflowId}
          />
        ),
      };
    } else if (trigger?.workflowId && trigger.triggerId) {
      found = {
        title: 'Trigger',
        page: (
          <TriggerPage
            key={trigger.triggerId}
            client={client}
            workflowId={trigger.workflowId}
            triggerId={trigger.triggerId}
          />
        ),
      };
    } else if (edit?.workflowId) {
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

/**
 * The pages of what tasks use and what Trellis sends: plugin configurations (`config`), the plugin
 * catalog (`plugins`) and the notification deliveries (admins); undefined for a path none has.
 */
function servicePage(session: Session, path: string): { title: string; page: VNode } | undefined {
  const { client, user } = session;
  const needs = (title: string, allowed: boolean, roles: ComponentChildren, page: () => VNode) => ({
    title,
    page: allowed ? (
      page()
    ) : (
      <NotForYourRoles
        session={session}
        needs={
          <>
            The {title.toLowerCase()} page needs {roles}.
          </>
        }
      />
    ),
  });
  if (path === '/configurations') {
    return needs(
      'Plugin configurations',
      canConfigure(user),
      <>
        the <strong>config</strong> or <strong>admin</strong> role
      </>,
      () => <ConfigurationsPage client={client} />,
    );
  }
  const plugin = match('/plugins/:pluginId', path);
  if (path === '/plugins' || plugin?.pluginId) {
    return needs(
      plugin ? 'Plugin' : 'Plugins',
      canManagePlugins(user),
      <>
        the <strong>plugins</strong> or <strong>admin</strong> role
      </>,
      () =>
        plugin?.pluginId ? (
          <PluginPage key={plugin.pluginId} client={client} pluginId={plugin.pluginId} />
        ) : (
          <PluginsPage client={client} />
        ),
    );
  }
  if (path === '/notifications') {
    return needs(
      'Notifications',
      isProjectAdmin(user),
      <>
        the <strong>admin</strong> role in the project
      </>,
      () => <NotificationsPage client={client} />,
    );
  }
  return undefined;
}
