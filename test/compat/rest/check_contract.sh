#!/usr/bin/env bash
# The contract check (README.md here): schemathesis generates requests
# from Confluent's v3 OpenAPI spec (openapi-v3.yaml) for every operation
# and checks each answer of the proxy at $REST_URL: no server error (5xx),
# status codes the spec documents (status_code_in_spec in
# contract_hooks.py: schemathesis' own check with the two documented
# exclusions), bodies that match the spec's schemas, and the documented
# content types. One result line, feature rest-v3-contract.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${REST_URL:?}" "${REST_CLUSTER_ID:?}" "${REST_WORK:?}" "${REST_VENV:?}" "${COMPAT_RESULTS:?}"
work=$REST_WORK/contract
mkdir -p "$work"
version=$("$REST_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))')

# The spec as vendored, but for one error of the spec itself: the
# PartitionWithOffsetsData offsets are "type: int64", not an OpenAPI type
# (schemathesis refuses the operation's schema); read as type integer,
# format int64, which is what the spec means.
sed -E 's/^( *)type: int64$/\1type: integer\n\1format: int64/' "$here/openapi-v3.yaml" >"$work/openapi-v3.yaml"

# The path's cluster is the proxy's own, and topics, brokers and
# partitions mostly the fixtures of run.sh, so most requests reach Kafka;
# the other fifth are generated (unknown ones: the 404s). Half the topics
# created are named from a short list, with replication factor 1 (the
# single node's) and partition counts that a PATCH of the fixture can
# grow to, so create and PATCH can succeed too.
quote_list() { local out="" v; for v in "$@"; do out+="${out:+, }\"$v\""; done; echo "$out"; }
run=$(date +%s)  # new topics' names differ from a run on the same cluster before
cat >"$work/schemathesis.toml" <<TOML
continue-on-failure = true
hooks = "contract_hooks"

[parameters]
"path.cluster_id" = "$REST_CLUSTER_ID"
"path.topic_name" = { dictionary = "topics", probability = 0.8 }
"path.broker_id" = { dictionary = "brokers", probability = 0.8 }
"path.partition_id" = { dictionary = "partitions", probability = 0.8 }
"path.consumer_group_id" = { dictionary = "groups", probability = 0.8 }
"body.topic_name" = { dictionary = "new_topics", probability = 0.5 }
"body.replication_factor" = { dictionary = "replication_factors", probability = 0.8 }
"body.partitions_count" = { dictionary = "partition_counts", probability = 0.8 }

[dictionaries.topics]
values = [$(quote_list "$REST_TOPIC")]
[dictionaries.brokers]
values = [${REST_BROKERS}]
[dictionaries.partitions]
values = [0, 1, 2]
[dictionaries.groups]
values = [$(quote_list "$REST_GROUP")]
[dictionaries.new_topics]
values = ["compat-rest-new-$run-1", "compat-rest-new-$run-2", "compat-rest-new-$run-3"]
[dictionaries.replication_factors]
values = [1]
[dictionaries.partition_counts]
values = [1, 4, 6, 8]
TOML

examples=${REST_CONTRACT_EXAMPLES:-30}
# Two runs: every operation but topic delete, then topic delete alone, so
# the fixture topic is there for the others (one run would delete it
# early and leave the rest answering 404).
contract_run() {
  local name=$1; shift
  (cd "$work" && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$here "$REST_VENV/bin/schemathesis" --config-file "$work/schemathesis.toml" \
    run "$work/openapi-v3.yaml" --url "$REST_URL/v3" \
    --checks not_a_server_error,status_code_in_spec,response_schema_conformance,content_type_conformance,every_operation_served \
    --phases examples,coverage,fuzzing --max-examples "$examples" --workers 2 --request-timeout 60 \
    --seed "${REST_CONTRACT_SEED:-1}" --no-color --report junit --report-dir "$work/report-$name" "$@") >"$work/out-$name.txt" 2>&1
}
start=$(date +%s)
rc=0
contract_run main --exclude-operation-id deleteKafkaTopic || rc=1
contract_run delete --include-operation-id deleteKafkaTopic || rc=1
cat "$work/out-main.txt" "$work/out-delete.txt" >"$work/out.txt"
took=$(( $(date +%s) - start ))
sum_of() { grep -oE "$1" "$work/out.txt" | grep -oE '[0-9]+' | awk '{s += $1} END {print s + 0}'; }
tested=$(sum_of 'Tested: [0-9]+')
cases=$(sum_of '[0-9]+ generated')
failures=$(sum_of '[0-9]+ failures?,')
summary="${failures:-0} failures"
detail="${tested:-?} operations, ${cases:-?} test cases, ${took}s: ${summary:-no summary}"
if [ $rc = 0 ]; then
  result=pass
else
  result=fail
  echo "rest: schemathesis found failures (first 200 lines of $work/out.txt):" >&2
  sed -n '/FAILURES\|ERRORS/,$p' "$work/out.txt" | head -n 200 >&2
fi
echo "rest: contract: $result ($detail)"
"$REST_VENV/bin/python" - "$version" "$result" "$detail" >>"$COMPAT_RESULTS" <<'PY'
import json, sys
print(json.dumps({"client": "schemathesis", "version": sys.argv[1], "feature": "rest-v3-contract",
                  "result": sys.argv[2], "detail": sys.argv[3]}))
PY
[ $result = pass ]
