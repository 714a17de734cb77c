/**
 * The workflows: a page of them at a time, or those whose name holds the search text. The API
 * lists workflows without a name filter, so a search reads the names of all of them (1,000 a
 * request) and pages the matches here.
 */
import type { TrellisClient } from '@trellis/sdk';
import { useState } from 'preact/hooks';
import { Loading, Pager, useLoad } from '../components/common.js';
import { formatDateTime } from '../format.js';
import { Link } from '../router.js';

const pageSize = 20;

interface WorkflowRow {
  id: string;
  name: string;
  modifiedDate: string;
}

interface Listing {
  rows: WorkflowRow[];
  page: number;
  totalPages: number;
  totalCount: number;
}

export function WorkflowsPage({ client }: { client: TrellisClient }) {
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const term = search.trim().toLowerCase();
  const listing = useLoad<Listing>(async () => {
    if (term === '') {
      const { data, pagination } = await client.page('/workflows', {
        params: { query: { page, pageSize } },
      });
      return {
        rows: data,
        page,
        totalPages: pagination.totalPages,
        totalCount: pagination.totalCount,
      };
    }
    const matches: WorkflowRow[] = [];
    for await (const workflow of client.all('/workflows', {
      params: { query: { pageSize: 1000 } },
    })) {
      if (workflow.name.toLowerCase().includes(term)) matches.push(workflow);
    }
    const totalPages = Math.max(1, Math.ceil(matches.length / pageSize));
    const shown = Math.min(page, totalPages);
    return {
      rows: matches.slice((shown - 1) * pageSize, shown * pageSize),
      page: shown,
      totalPages,
      totalCount: matches.length,
    };
  }, [term, page]);

  return (
    <main id="main">
      <div class="page-head">
        <h1>Workflows</h1>
        <Link to="/workflows/new" class="button primary">
          New workflow
        </Link>
      </div>
      <form class="search" role="search" onSubmit={(event) => event.preventDefault()}>
        <label for="workflow-search">Search by name</label>
        <input
          id="workflow-search"
          type="search"
          value={search}
          onInput={(event) => {
            setSearch(event.currentTarget.value);
            setPage(1);
          }}
        />
      </form>
      <Loading loaded={listing}>
        {(found) =>
          found.rows.length === 0 ? (
            <p class="muted">
              {term ? `No workflow's name holds "${search.trim()}".` : 'No workflows yet.'}
            </p>
          ) : (
            <>
              <div class="table-scroll">
                <table>
                  <caption class="visually-hidden">Workflows</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Last changed</th>
                    </tr>
                  </thead>
                  <tbody>
                    {found.rows.map((workflow) => (
                      <tr key={workflow.id}>
                        <td>
                          <Link to={`/workflows/${workflow.id}`}>{workflow.name}</Link>
                        </td>
                        <td>{formatDateTime(workflow.modifiedDate)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager
                page={found.page}
                totalPages={found.totalPages}
                totalCount={found.totalCount}
                label="Workflow pages"
                onPage={setPage}
              />
            </>
          )
        }
      </Loading>
    </main>
  );
}
