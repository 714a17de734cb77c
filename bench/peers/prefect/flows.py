"""The Prefect peer: a flow of `steps` no-op tasks in sequence, served as a deployment.

As Prefect's documentation recommends for running flows through its server: `flow.serve()`
stores the deployment in the server and polls it for runs, which the benchmark creates through
the server's API (`POST /deployments/{id}/create_flow_run`), as Trellis' are through its own.
The runner runs each flow run in a process of its own, as it always does. `--limit` runs at once.
"""

import argparse

from prefect import flow, task


@task
def noop() -> None:
    return None


@flow
def chain(steps: int) -> None:
    for _ in range(steps):
        noop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=50)
    arguments = parser.parse_args()
    print('ready {"deployment": "chain/bench"}', flush=True)
    chain.serve(name="bench", limit=arguments.limit, print_starting_message=False)
