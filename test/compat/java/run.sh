#!/usr/bin/env bash
# The Java suite: the Apache Kafka Java client (Compat.java), Kafka's own
# command-line tools run through their main classes, and a Kafka Streams word
# count under exactly_once_v2 (WordCount.java), all of one pinned Kafka
# version (pom.xml). Contract in ../README.md: SAMSA_BOOTSTRAP, COMPAT_RESULTS,
# COMPAT_CACHE (Maven's local repository goes in $COMPAT_CACHE/m2). With
# COMPAT_PART=security it runs the Java client's security part instead
# (Security.java) and neither the tools nor Streams.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
. ../lib.sh
: "${SAMSA_BOOTSTRAP:?SAMSA_BOOTSTRAP not set}" "${COMPAT_RESULTS:?COMPAT_RESULTS not set}"
COMPAT_CACHE=${COMPAT_CACHE:-$HOME/.cache/samsa-compat}
m2=$COMPAT_CACHE/m2
logs=$here/target/logs
B=$SAMSA_BOOTSTRAP

java_features=(create-topic delete-topic produce-none produce-gzip produce-snappy produce-lz4 produce-zstd
  acks-0 acks-1 acks-all keys-headers group-consume-commit rebalance-two-members rebalance-two-members-kip848
  list-offsets reset-offsets describe-configs idempotent-produce transactions client-telemetry follower-fetch)
tool_features=(tool-topic-create tool-topic-describe tool-topic-alter tool-console-producer tool-console-consumer
  tool-group-describe tool-group-reset tool-configs tool-producer-perf tool-consumer-perf tool-reassign-partitions)
security_features=(ssl mtls $([ -n "${SAMSA_AUTHORIZER:-}" ] && echo mtls-principal) sasl-plain sasl-scram-sha-256 sasl-scram-sha-512 sasl-oauthbearer
  sasl-ssl-plain sasl-ssl-scram-sha-256 sasl-ssl-scram-sha-512 sasl-ssl-oauthbearer
  auth-wrong-password auth-unknown-user auth-expired-token auth-no-client-certificate acl-matrix)
security=0
if [ "${COMPAT_PART:-}" = security ]; then
  security=1 java_features=("${security_features[@]}") tool_features=()
fi
kafka_version=$(sed -n 's|.*<kafka.version>\(.*\)</kafka.version>.*|\1|p' pom.xml)

# ---------------------------------------------------------------- build
build() {
  local mvn=(mvn -q -B -Dmaven.repo.local="$m2" compile dependency:build-classpath
    -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime)
  # Offline first (a warm cache needs no network), online if that fails.
  "${mvn[@]}" -o >target/build.log 2>&1 || "${mvn[@]}" >target/build.log 2>&1
}
mkdir -p target
rm -rf "$logs"; mkdir -p "$logs"
t0=$(date +%s)
if ! build; then
  echo "java: maven build failed:"; tail -n 40 target/build.log
  for f in "${java_features[@]}"; do result java-client "$kafka_version" "$f" fail "maven build failed"; done
  for f in "${tool_features[@]}"; do result kafka-tools "$kafka_version" "$f" fail "maven build failed"; done
  [ $security = 1 ] || result kafka-streams "$kafka_version" streams-wordcount-eos fail "maven build failed"
  exit 1
fi
echo "java: built in $(( $(date +%s) - t0 ))s"
CP=$here/target/classes:$(cat target/classpath.txt)
JAVA=(java -Xmx512m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err -cp "$CP")
# The short-lived tools start faster with C1 only and the serial collector.
TOOL_JAVA=(java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err -cp "$CP")
failed=0

# -------------------------------------------- the security part, on its own
if [ $security = 1 ]; then
  echo "java: client security features"
  if ! timeout 300 "${JAVA[@]}" -Dcompat.timeout=60 samsa.compat.Security "$COMPAT_RESULTS" 2>"$logs/security.err"; then
    failed=1
    echo "-- Security stderr tail:"; grep -v '^\s*at ' "$logs/security.err" | tail -n 30
  fi
  # acl-matrix: the authorization matrix (internal/broker's TestAuthzMatrix,
  # brokers of its own) with its Java column: every cell the Java client
  # can express checked through it too (AuthzProbe).
  echo "java: the ACL matrix with the Java client"
  root=$(cd "$here/../../.." && pwd)
  if (cd "$root" && SAMSA_AUTHZ_JAVA="${JAVA[*]} samsa.compat.AuthzProbe" timeout 900 \
        go test ./internal/broker -run 'TestAuthzMatrix$' -count=1 -v) >"$logs/acl-matrix.out" 2>&1; then
    result java-client "$kafka_version" acl-matrix pass "$(grep -o '[0-9]* rows, .* too' "$logs/acl-matrix.out" | head -n 1)"
  else
    failed=1
    result java-client "$kafka_version" acl-matrix fail "$(grep -E '^\s+e2e_authz.*(java|want)' "$logs/acl-matrix.out" | head -n 5 | tr -s ' \n' ' ' | cut -c1-600)"
    echo "-- acl-matrix failures:"; grep -E -- '--- FAIL|e2e_authz' "$logs/acl-matrix.out" | head -n 40
  fi
  for f in "${java_features[@]}"; do
    grep -q "\"client\": *\"java-client\".*\"feature\": *\"$f\"" "$COMPAT_RESULTS" ||
      result java-client "$kafka_version" "$f" fail "not reached: the client run timed out after 300s"
  done
  exit $failed
fi

# ------------------------------------------------------ (a) the Java client
echo "java: client features"
# Each feature has 45 s (Compat's own timeout); the whole run 300 s.
if ! timeout 300 "${JAVA[@]}" -Dcompat.timeout=45 samsa.compat.Compat "$B" "$COMPAT_RESULTS" 2>"$logs/compat.err"; then
  failed=1
  echo "-- Compat stderr tail:"; grep -v '^\s*at ' "$logs/compat.err" | tail -n 30
fi
# client-telemetry (KIP-714): internal/broker's TestClientTelemetryFromJava,
# on a broker of its own with the HTTP listener on, runs TelemetryProbe (a
# producer pushing its metrics) and reads them on /metrics.
echo "java: client telemetry"
root=$(cd "$here/../../.." && pwd)
if (cd "$root" && SAMSA_TELEMETRY_JAVA="${JAVA[*]} samsa.compat.TelemetryProbe" timeout 300 \
      go test ./internal/broker -run 'TestClientTelemetryFromJava$' -count=1 -v) >"$logs/client-telemetry.out" 2>&1 \
   && grep -q -- '--- PASS: TestClientTelemetryFromJava' "$logs/client-telemetry.out"; then
  result java-client "$kafka_version" client-telemetry pass "$(grep -o '[0-9]* families of the Java producer.*' "$logs/client-telemetry.out" | head -n 1)"
else
  failed=1
  result java-client "$kafka_version" client-telemetry fail "$(grep -E '^\s+e2e_client_metrics' "$logs/client-telemetry.out" | head -n 3 | tr -s ' \n' ' ' | cut -c1-600)"
  echo "-- client-telemetry:"; tail -n 20 "$logs/client-telemetry.out"
fi
# follower-fetch (KIP-392): internal/broker's
# TestClusterJavaRackConsumerReadsFromItsRack, on three in-process brokers in
# racks a, b and c, runs RackConsumer (client.rack=b) and reads on the
# brokers' counters that the rack-b broker served its bytes.
echo "java: follower fetching"
if (cd "$root" && SAMSA_RACK_JAVA="${JAVA[*]} samsa.compat.RackConsumer" timeout 300 \
      go test ./internal/broker -run 'TestClusterJavaRackConsumerReadsFromItsRack$' -count=1 -v) >"$logs/follower-fetch.out" 2>&1 \
   && grep -q -- '--- PASS: TestClusterJavaRackConsumerReadsFromItsRack' "$logs/follower-fetch.out"; then
  result java-client "$kafka_version" follower-fetch pass "$(grep -o "the Java consumer's bytes served by node.*" "$logs/follower-fetch.out" | head -n 1)"
else
  failed=1
  result java-client "$kafka_version" follower-fetch fail "$(grep -E '^\s+follower_fetch' "$logs/follower-fetch.out" | head -n 3 | tr -s ' \n' ' ' | cut -c1-600)"
  echo "-- follower-fetch:"; tail -n 20 "$logs/follower-fetch.out"
fi
# A feature the killed JVM did not reach still gets its line.
for f in "${java_features[@]}"; do
  grep -q "\"client\": *\"java-client\".*\"feature\": *\"$f\"" "$COMPAT_RESULTS" ||
    result java-client "$kafka_version" "$f" fail "not reached: the client run timed out after 300s"
done

# ----------------------------------------------------------- (b) the tools
echo "java: kafka tools"
# The time of a feature: from the previous feature's end.
last=$SECONDS
took() { dt=$(( SECONDS - last )); last=$SECONDS; }
tools_fail() { result kafka-tools "$kafka_version" "$1" fail "$2"; failed=1; took; printf '%-30s fail %4ss  %s\n' "$1" "$dt" "$2"; }
tools_pass() { result kafka-tools "$kafka_version" "$1" pass "${2:-}"; took; printf '%-30s pass %4ss  %s\n' "$1" "$dt" "${2:-}"; }

# tool NAME SECONDS CLASS ARGS...: runs a tool's main class; its stdout in
# $logs/NAME.out, stderr in $logs/NAME.err; $out holds stdout; returns its status.
tool() {
  local name=$1 secs=$2 cls=$3; shift 3
  local j=("${TOOL_JAVA[@]}")
  case $cls in *Performance) j=("${JAVA[@]}") ;; esac
  timeout "$secs" "${j[@]}" "$cls" "$@" >"$logs/$name.out" 2>"$logs/$name.err" </dev/null
  local rc=$?
  out=$(cat "$logs/$name.out")
  if [ $rc -ne 0 ]; then
    echo "-- $cls $* exited $rc; stdout/stderr tail:" >&2
    tail -n 5 "$logs/$name.out" >&2; grep -v '^\s*at ' "$logs/$name.err" | tail -n 10 >&2
  fi
  return $rc
}
# The first line of a file, one line, for a detail.
errline() { grep -v '^\s*at \|WARN\|^$' "$logs/$1.err" "$logs/$1.out" 2>/dev/null | head -n 3 | cut -c1-300 | tr '\n' ' '; }

run=$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
T=tools-topic-$run       # TopicCommand, ConfigCommand
C=tools-console-$run     # console producer and consumer, group commands
P=tools-perf-$run        # perf tools
G=tools-group-$run
TopicCommand=org.apache.kafka.tools.TopicCommand
ConfigCommand=org.apache.kafka.tools.ConfigCommand
GroupCommand=org.apache.kafka.tools.consumer.group.ConsumerGroupCommand

# tool-topic-create
if tool topic-create 60 $TopicCommand --bootstrap-server "$B" --create --topic "$T" --partitions 2 \
     --replication-factor 1 --config retention.ms=3600000 \
   && grep -q "Created topic $T" <<<"$out" \
   && tool topic-list 60 $TopicCommand --bootstrap-server "$B" --list && grep -qx "$T" <<<"$out"; then
  tools_pass tool-topic-create
else
  tools_fail tool-topic-create "$(errline topic-create; errline topic-list)"
fi

# tool-topic-describe: the counts, each partition led, the override shown.
if tool topic-describe 60 $TopicCommand --bootstrap-server "$B" --describe --topic "$T" \
   && grep -q "PartitionCount: 2" <<<"$out" && grep -q "ReplicationFactor: 1" <<<"$out" \
   && grep -q "retention.ms=3600000" <<<"$out" \
   && [ "$(grep -cE "Partition: [01]\s+Leader: [0-9]+" <<<"$out")" = 2 ]; then
  tools_pass tool-topic-describe
else
  tools_fail tool-topic-describe "unexpected describe output: $(tr '\n\t' '  ' <<<"$out" | cut -c1-400) $(errline topic-describe)"
fi
broker_id=$(grep -oE "Leader: [0-9]+" "$logs/topic-describe.out" | head -n1 | grep -oE '[0-9]+')

# tool-topic-alter: 2 -> 3 partitions; decreasing is refused.
if tool topic-alter 60 $TopicCommand --bootstrap-server "$B" --alter --topic "$T" --partitions 3 \
   && tool topic-describe2 60 $TopicCommand --bootstrap-server "$B" --describe --topic "$T" \
   && grep -q "PartitionCount: 3" <<<"$out" && grep -qE "Partition: 2\s+Leader: [0-9]+" <<<"$out"; then
  if tool topic-alter-down 60 $TopicCommand --bootstrap-server "$B" --alter --topic "$T" --partitions 1 2>/dev/null; then
    tools_fail tool-topic-alter "decreasing the partitions 3 -> 1 was accepted"
  elif ! grep -q "InvalidPartitionsException" "$logs/topic-alter-down.err" "$logs/topic-alter-down.out"; then
    tools_fail tool-topic-alter "decreasing partitions: want InvalidPartitionsException, got: $(errline topic-alter-down)"
  else
    tools_pass tool-topic-alter
  fi
else
  tools_fail tool-topic-alter "$(tr '\n\t' '  ' <<<"$out" | cut -c1-300) $(errline topic-alter)"
fi

# inject_line TOPIC FILE: the mutation hook (../README.md): with COMPAT_INJECT_DUPLICATE
# set, one more copy of the last line of FILE goes to TOPIC through a console
# producer of its own, the checks not told.
inject_line() {
  case "${COMPAT_INJECT_DUPLICATE:-}" in ''|0) return ;; esac
  tail -n 1 "$2" | timeout 60 "${TOOL_JAVA[@]}" org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$B" \
    --topic "$1" --reader-property parse.key=true --reader-property parse.headers=true --command-property acks=all \
    >"$logs/inject-$1.out" 2>"$logs/inject-$1.err"
}
# end_offset TOPIC: the sum of TOPIC's end offsets (GetOffsetShell, latest), in $end.
end_offset() {
  tool "end-offsets-$1" 60 org.apache.kafka.tools.GetOffsetShell --bootstrap-server "$B" --topic "$1" || return 1
  end=$(awk -F: '{s += $3} END {print s + 0}' <<<"$out")
}

# tool-console-producer: keys and headers parsed from the lines; the end offset then checked.
expected=$logs/console-expected.txt
: >"$expected"
for i in $(seq 0 9); do
  printf 'h1:v%d,h2:bin\\x%02d\tkey-%d\tvalue %d with spaces\n' "$i" "$i" "$i" "$i" >>"$expected"
done
if tool topic-create-c 60 $TopicCommand --bootstrap-server "$B" --create --topic "$C" --partitions 1 --replication-factor 1 \
   && timeout 60 "${TOOL_JAVA[@]}" org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$B" --topic "$C" \
        --reader-property parse.key=true --reader-property parse.headers=true \
        --command-property acks=all <"$expected" >"$logs/console-producer.out" 2>"$logs/console-producer.err" \
   && { inject_line "$C" "$expected"; true; } \
   && tool get-offsets 60 org.apache.kafka.tools.GetOffsetShell --bootstrap-server "$B" --topic "$C" \
   && grep -qx "$C:0:10" <<<"$out"; then
  tools_pass tool-console-producer
else
  tools_fail tool-console-producer "end offsets: $(tr '\n' ' ' <<<"${out:-}") $(errline console-producer)"
fi

# tool-console-consumer: reads to the end offset (as many records as it says: one
# partition, no markers) and prints headers, key and value exactly as they were
# produced, no line more; commits for the group.
end=0; end_offset "$C"
if tool console-consumer 60 org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$B" --topic "$C" \
     --from-beginning --max-messages "$end" --group "$G" --timeout-ms 30000 \
     --formatter-property print.key=true --formatter-property print.headers=true; then
  if diff "$expected" "$logs/console-consumer.out" >"$logs/console-consumer.diff"; then
    tools_pass tool-console-consumer
  else
    tools_fail tool-console-consumer "output differs from what was produced: $(head -c 400 "$logs/console-consumer.diff" | tr '\n\t' '  ')"
  fi
else
  tools_fail tool-console-consumer "$(errline console-consumer)"
fi

# tool-group-describe: 5 more records, so CURRENT-OFFSET 10, LOG-END-OFFSET 15, LAG 5.
# group_row: "current logend lag" of partition 0 of $C in the describe output.
group_row() { awk -v t="$C" '$2 == t && $3 == "0" {print $4, $5, $6}' <<<"$out"; }
seq 10 14 | sed 's/^/more-/' | timeout 60 "${TOOL_JAVA[@]}" org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$B" \
  --topic "$C" >"$logs/console-producer2.out" 2>"$logs/console-producer2.err"
if tool group-list 60 $GroupCommand --bootstrap-server "$B" --list && grep -qx "$G" <<<"$out" \
   && tool group-describe 60 $GroupCommand --bootstrap-server "$B" --describe --group "$G" \
   && grep -qE "CURRENT-OFFSET +LOG-END-OFFSET +LAG" <<<"$out"; then
  row=$(group_row)
  if [ "$row" = "10 15 5" ]; then
    tools_pass tool-group-describe
  else
    tools_fail tool-group-describe "current/log-end/lag '$row', want '10 15 5': $(tr '\n' ' ' <<<"$out" | tr -s ' ' | cut -c1-400)"
  fi
else
  tools_fail tool-group-describe "$(tr '\n' ' ' <<<"${out:-}" | tr -s ' ' | cut -c1-300) $(errline group-describe)"
fi

# tool-group-reset: --dry-run changes nothing; --to-earliest --execute does; describe shows it.
if tool group-reset-dry 60 $GroupCommand --bootstrap-server "$B" --reset-offsets --group "$G" --topic "$C" \
     --to-offset 3 --dry-run \
   && awk -v t="$C" '$2 == t && $3 == "0" && $4 == "3" {f=1} END {exit !f}' <<<"$out" \
   && tool group-describe-dry 60 $GroupCommand --bootstrap-server "$B" --describe --group "$G" \
   && [ "$(group_row)" = "10 15 5" ] \
   && tool group-reset 60 $GroupCommand --bootstrap-server "$B" --reset-offsets --group "$G" --topic "$C" \
     --to-earliest --execute \
   && awk -v t="$C" '$2 == t && $3 == "0" && $4 == "0" {f=1} END {exit !f}' <<<"$out" \
   && tool group-describe-reset 60 $GroupCommand --bootstrap-server "$B" --describe --group "$G" \
   && [ "$(group_row)" = "0 15 15" ]; then
  tools_pass tool-group-reset
else
  tools_fail tool-group-reset "$(tr '\n' ' ' <<<"${out:-}" | tr -s ' ' | cut -c1-400) $(errline group-reset)"
fi

# tool-configs: a topic's and a broker's configs, described, added, deleted.
cfg_ok=1; cfg_why=""
cfg_check() { # NAME WHY: fail the feature when the last command failed
  if [ "$1" != 0 ]; then cfg_ok=0; cfg_why="${cfg_why}$2; "; fi
}
tool configs-topic-alter 60 $ConfigCommand --bootstrap-server "$B" --entity-type topics --entity-name "$T" \
  --alter --add-config 'retention.ms=7200000,max.message.bytes=2000000,cleanup.policy=[delete,compact]'
cfg_check $? "topic --alter --add-config: $(errline configs-topic-alter)"
tool configs-topic-describe 60 $ConfigCommand --bootstrap-server "$B" --entity-type topics --entity-name "$T" --describe
cfg_check $? "topic --describe: $(errline configs-topic-describe)"
for want in retention.ms=7200000 max.message.bytes=2000000 cleanup.policy=delete,compact; do
  grep -q "$want" <<<"$out"; cfg_check $? "topic describe lacks $want: $(tr '\n' ' ' <<<"$out" | cut -c1-300)"
done
tool configs-topic-delete 60 $ConfigCommand --bootstrap-server "$B" --entity-type topics --entity-name "$T" \
  --alter --delete-config max.message.bytes
cfg_check $? "topic --delete-config: $(errline configs-topic-delete)"
tool configs-topic-describe2 60 $ConfigCommand --bootstrap-server "$B" --entity-type topics --entity-name "$T" --describe
! grep -q "max.message.bytes=" <<<"$out"; cfg_check $? "max.message.bytes still set after --delete-config"
tool configs-topic-all 60 $ConfigCommand --bootstrap-server "$B" --entity-type topics --entity-name "$T" --describe --all
grep -q "segment.bytes=" <<<"$out"; cfg_check $? "topic --describe --all lacks segment.bytes: $(errline configs-topic-all)"
if [ -n "$broker_id" ]; then
  tool configs-broker-alter 60 $ConfigCommand --bootstrap-server "$B" --entity-type brokers --entity-name "$broker_id" \
    --alter --add-config log.cleaner.threads=2
  cfg_check $? "broker --alter --add-config log.cleaner.threads=2: $(errline configs-broker-alter)"
  tool configs-broker-describe 60 $ConfigCommand --bootstrap-server "$B" --entity-type brokers --entity-name "$broker_id" --describe
  grep -q "log.cleaner.threads=2" <<<"$out"
  cfg_check $? "broker describe lacks log.cleaner.threads=2: $(tr '\n' ' ' <<<"$out" | cut -c1-300) $(errline configs-broker-describe)"
  tool configs-broker-delete 60 $ConfigCommand --bootstrap-server "$B" --entity-type brokers --entity-name "$broker_id" \
    --alter --delete-config log.cleaner.threads
  cfg_check $? "broker --delete-config: $(errline configs-broker-delete)"
  tool configs-broker-all 60 $ConfigCommand --bootstrap-server "$B" --entity-type brokers --entity-name "$broker_id" --describe --all
  grep -q "num.partitions=" <<<"$out"; cfg_check $? "broker --describe --all lacks num.partitions: $(errline configs-broker-all)"
  tool configs-default-alter 60 $ConfigCommand --bootstrap-server "$B" --entity-type brokers --entity-default \
    --alter --add-config log.cleaner.threads=2
  cfg_check $? "broker default --alter: $(errline configs-default-alter)"
  tool configs-default-describe 60 $ConfigCommand --bootstrap-server "$B" --entity-type brokers --entity-default --describe
  grep -q "log.cleaner.threads=2" <<<"$out"; cfg_check $? "broker default describe lacks log.cleaner.threads=2: $(tr '\n' ' ' <<<"$out" | cut -c1-300)"
  tool configs-default-delete 60 $ConfigCommand --bootstrap-server "$B" --entity-type brokers --entity-default \
    --alter --delete-config log.cleaner.threads
  cfg_check $? "broker default --delete-config: $(errline configs-default-delete)"
else
  cfg_check 1 "no broker id from the topic describe"
fi
if [ $cfg_ok = 1 ]; then tools_pass tool-configs; else tools_fail tool-configs "$cfg_why"; fi

# tool-producer-perf: 100000 records of 100 B, as fast as it goes.
if tool topic-create-p 60 $TopicCommand --bootstrap-server "$B" --create --topic "$P" --partitions 3 --replication-factor 1 \
   && tool producer-perf 180 org.apache.kafka.tools.ProducerPerformance --bootstrap-server "$B" --topic "$P" \
        --num-records 100000 --record-size 100 --throughput -1 --command-property acks=all linger.ms=5 \
   && summary=$(grep -E '^100000 records sent' <<<"$out") && [ -n "$summary" ]; then
  printf "h:x\tk\tperf-extra\n" >"$logs/perf-extra.txt"; inject_line "$P" "$logs/perf-extra.txt"
  tools_pass tool-producer-perf "$summary"
else
  tools_fail tool-producer-perf "$(tail -n 2 <<<"${out:-}" | tr '\n' ' ') $(errline producer-perf)"
fi

# tool-consumer-perf: reads to the end offsets (as many records as they add up
# to), which must hold exactly the 100000 produced.
end=0; end_offset "$P"
if tool consumer-perf 180 org.apache.kafka.tools.ConsumerPerformance --bootstrap-server "$B" --topic "$P" \
     --num-records "$end" --timeout 30000 --group "perf-$run"; then
  # start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, ...
  line=$(tail -n 1 <<<"$out")
  n=$(awk -F', *' '{print $5}' <<<"$line")
  if [ "$n" = 100000 ] && [ "$end" = 100000 ]; then
    tools_pass tool-consumer-perf "$(awk -F', *' '{printf "%s records, %s MB, %s MB/s, %s records/s, fetch %s ms", $5, $3, $4, $6, $8}' <<<"$line")"
  else
    tools_fail tool-consumer-perf "consumed $n records to the end offsets (adding up to $end), produced 100000: $(tr '\n' ' ' <<<"$out")"
  fi
else
  tools_fail tool-consumer-perf "$(errline consumer-perf)"
fi

# tool-reassign-partitions (KIP-455, issue 15): internal/cli's
# TestKafkaToolsReassign, on three samsa serve processes of its own, runs
# kafka-reassign-partitions.sh's main class (--execute and --verify of a plan
# samsa cluster reassign --generate wrote, --generate and --list) and
# kafka-topics.sh --describe during the move (which shows the adding and
# removing replicas), and samsa cluster reassign carries out Kafka's plan.
root=$(cd "$here/../../.." && pwd)
if (cd "$root" && SAMSA_KAFKA_TOOLS_JAVA="${TOOL_JAVA[*]}" timeout 600 \
      go test ./internal/cli -run 'TestKafkaToolsReassign$' -count=1 -v) >"$logs/reassign-partitions.out" 2>&1 \
   && grep -q -- '--- PASS: TestKafkaToolsReassign' "$logs/reassign-partitions.out"; then
  tools_pass tool-reassign-partitions "a move by Kafka's tool completed, kafka-topics.sh showed it adding and removing replicas; Kafka's plan run by samsa"
else
  tools_fail tool-reassign-partitions "$(grep -E '^\s+cluster_kafka_tools' "$logs/reassign-partitions.out" | head -n 3 | tr -s ' \n' ' ' | cut -c1-600)"
  echo "-- tool-reassign-partitions:"; grep -v '^\s*time=' "$logs/reassign-partitions.out" | tail -n 20
fi

# ------------------------------------------------------- (c) Kafka Streams
echo "java: kafka streams"
last=$SECONDS
if timeout 240 "${JAVA[@]}" -Dsamsa.streams.state="$here/target/streams-state" samsa.compat.WordCount "$B" "$COMPAT_RESULTS" \
     2>"$logs/wordcount.err"; then
  :
else
  rc=$?
  failed=1
  if ! grep -q '"feature": *"streams-wordcount-eos"' "$COMPAT_RESULTS"; then
    why="exited $rc"; [ $rc = 124 ] && why="timed out after 240s"
    result kafka-streams "$kafka_version" streams-wordcount-eos fail "$why"
  fi
  echo "-- WordCount stderr tail:"; grep -v '^\s*at ' "$logs/wordcount.err" | tail -n 30
fi

took; echo "java: streams took ${dt}s"
exit $failed
