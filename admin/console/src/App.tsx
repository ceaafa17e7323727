// The console's frame: the sign-in form until a token is accepted, then the header (pages, the
// workspace picker, sign out) over the page the address names.
import { useEffect, useState } from 'react';
import { Execution } from './pages/Execution.tsx';
import { Executions } from './pages/Executions.tsx';
import { Keys } from './pages/Keys.tsx';
import { Knowledge } from './pages/Knowledge.tsx';
import { Login } from './pages/Login.tsx';
import { NewWorkflow } from './pages/NewWorkflow.tsx';
import { Overview } from './pages/Overview.tsx';
import { Quotas } from './pages/Quotas.tsx';
import { Workflow } from './pages/Workflow.tsx';
import { Workflows } from './pages/Workflows.tsx';
import { Link, useLocation } from './router.tsx';
import { onSignedOut, queryClient, session } from './trpc.ts';
import { WorkspacePicker, WorkspaceProvider } from './workspace.tsx';

const NAV = [
  ['overview', 'Overview'],
  ['executions', 'Executions'],
  ['workflows', 'Workflows'],
  ['keys', 'Keys'],
  ['quotas', 'Quotas'],
  ['knowledge', 'Knowledge'],
] as const;

export function App() {
  const [signedIn, setSignedIn] = useState(() => session.token() !== null);
  const [refusal, setRefusal] = useState<string | null>(null);
  useEffect(
    () =>
      onSignedOut((message) => {
        queryClient.clear();
        setRefusal(message);
        setSignedIn(false);
      }),
    [],
  );
  if (!signedIn)
    return (
      <Login
        refusal={refusal}
        onSignedIn={() => {
          setRefusal(null);
          setSignedIn(true);
        }}
      />
    );
  const signOut = () => {
    session.signOut();
    queryClient.clear();
    setSignedIn(false);
  };
  return (
    <WorkspaceProvider>
      <Shell onSignOut={signOut} />
    </WorkspaceProvider>
  );
}

function Shell(props: { onSignOut: () => void }) {
  const { pathname } = useLocation();
  const [section = 'overview', id] = pathname.split('/').filter(Boolean);
  return (
    <>
      <header className="top">
        <Link to="/overview" className="brand">
          Workflow service <span>admin</span>
        </Link>
        <nav>
          {NAV.map(([to, label]) => (
            <Link key={to} to={`/${to}`} className={section === to ? 'active' : ''}>
              {label}
            </Link>
          ))}
        </nav>
        <div className="top-right">
          <WorkspacePicker />
          <button type="button" className="link" onClick={props.onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main>
        <Page section={section} id={id} />
      </main>
    </>
  );
}

function Page(props: { section: string; id: string | undefined }) {
  const { section, id } = props;
  switch (section) {
    case 'overview':
      return <Overview />;
    case 'executions':
      return id ? <Execution id={id} /> : <Executions />;
    case 'workflows':
      return id === 'new' ? <NewWorkflow /> : id ? <Workflow id={id} /> : <Workflows />;
    case 'keys':
      return <Keys />;
    case 'quotas':
      return <Quotas />;
    case 'knowledge':
      return <Knowledge />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no page at this address. <Link to="/overview">Go to the overview</Link>.
          </p>
        </section>
      );
  }
}
