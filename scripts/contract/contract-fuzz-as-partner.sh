#!/usr/bin/env bash
# Schemathesis as a partner runs it: `st run <url>/openapi.json --auth user:password --checks all`
# against a real Trellis, with none of our hooks and none of schemathesis.toml (st starts in an
# empty folder, so it finds no configuration). Only the document guides it. Fails on any failure
# other than the rules the document cannot state (README, "Contract guarantees", and UNSTATABLE
# below), and a locked-out user name answered 429 where the fuzzer expects 401.
# Extra arguments go to `st run` (default budget: 120 s); PARTNER_JUNIT=<file> keeps the report.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="$(bash scripts/contract/contract-tools.sh)"
scratch="$(mktemp -d)"
trap '[ -z "${PARTNER_JUNIT:-}" ] || cp "$scratch/junit.xml" "$PARTNER_JUNIT" 2>/dev/null; rm -rf "$scratch"' EXIT
echo "Schemathesis $("$bin/st" --version | awk '{print $NF}') as a partner runs it: no hooks, no configuration"
status=0
ST="$bin/st" SCRATCH="$scratch" node --import tsx scripts/dev/with-trellis.ts -- \
  sh -c 'cd "$SCRATCH" && exec "$ST" run "$TRELLIS_URL/openapi.json" \
    --auth "$TRELLIS_USER:$TRELLIS_PASSWORD" --checks all --seed 1 --max-time 120 \
    --report junit --report-junit-path "$SCRATCH/junit.xml" --no-color "$@"' st "$@" |
  sed -u -E 's/^=+ (.+ in [0-9.]+s) =+$/Schemathesis: \1/' || status=$?
[ -f "$scratch/junit.xml" ] || { echo "Schemathesis as a partner: no report (exit $status)"; exit 1; }
"$bin/python" - "$scratch/junit.xml" <<'PY'
import re, sys
import xml.etree.ElementTree as ET

# What no schema can state (README, "Contract guarantees"), by the message the server gives:
# values checked against a schema the instance holds (a definition, alone or in an apply's list,
# against the installed plugins the project allows and its own graph, inputs against what the
# workflow or the approval's form declares); a NUL nested in free-form JSON (inputs, a webhook's
# body), which the document states for strings and an object's own keys only; a body id that
# must equal the path's; paging by `after` and `page` at once, or after an id the list does not
# hold; a time range whose `from` is not before its `to`; the task a rerun starts from, which must
# be a task of the run's definition; the test cases a test run names, which must be the
# workflow's (or its candidate's).
UNSTATABLE = re.compile(
    r"body\.(workflows\[\d+\]\.)?(definition|inputs)\b"
    r"|body\.\w+: must equal the \w+ in the path"
    r"|query\.after: (cannot be combined with page|must be the id of)"
    r"|(query|body\.filter)\.from: must (be before|not be after)"
    r"|body\.fromTask: names no task of the execution's definition"
    r"|body\.cases\[\d+\]: names no test case of"
)
NESTED_NUL = re.compile(r"contains a NUL character")
# Each message of the answer, escapes kept (the report may cut a long body short).
MESSAGES = re.compile(r'(?:"messages":\["|",")((?:body|query|path|header)[.\[](?:[^"\\]|\\.)*)')

def unstatable(message: str) -> bool:
    return UNSTATABLE.match(message) is not None or NESTED_NUL.search(message) is not None

TRUNCATED = " // Output truncated"

def stated_elsewhere(case: str) -> bool:
    messages = MESSAGES.findall(case)
    locked_out = re.search(r"^\[429\]", case, re.M) is not None and "401" in case
    # A long answer is cut short in the report: its last message may stop mid-way. What is left
    # of it must be unstatable, or the start of a whole message before it (`body.work` of
    # `body.workflows[1].definition: ...`).
    whole = [m for m in messages if TRUNCATED not in m]
    cut = [m.split(TRUNCATED)[0] for m in messages if TRUNCATED in m]
    return locked_out or (
        len(whole) > 0
        and all(unstatable(m) for m in whole)
        and all(unstatable(c) or any(m.startswith(c) for m in whole) for c in cut)
    )

unexpected = []
for test in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    for failure in test.findall("failure"):
        for case in re.split(r"\n(?=\d+\. Test Case ID)", failure.text or ""):
            if "Test Case ID" in case and not stated_elsewhere(case):
                said = re.findall(r'"messages":\[(".{0,100}?)"[\],]', case)
                unexpected.append(f"{test.get('name')}: {case.strip().splitlines()[0]} {said[:1]}")
for line in unexpected:
    print(f"unexpected: {line}")
print(f"Schemathesis as a partner: {len(unexpected)} failures beyond the rules the document cannot state")
sys.exit(1 if unexpected else 0)
PY
