#!/usr/bin/env bash
# Starts Apache Kafka's distributed Connect worker
# (org.apache.kafka.connect.cli.ConnectDistributed) in the foreground, for
# the differential test of Samsa's Connect REST API (test/connectdiff). The
# jars (connect-runtime, connect-file, connect-json and a log4j2 slf4j
# binding, pom.xml here) are copied from Maven Central once into
# $COMPAT_CACHE/connect-libs-VERSION.
#
#   CONNECT_BOOTSTRAP  the Kafka (or Samsa) cluster, host:port (required)
#   CONNECT_DIR        a directory for worker.properties (required)
#   CONNECT_PORT       the REST listener's port on 127.0.0.1 (required)
#   CONNECT_GROUP      the worker's group.id (connect-diff)
#   KAFKA_VERSION (4.3.0: pom.xml says why not 4.4.0), COMPAT_CACHE (~/.cache/samsa-compat), JAVA (java)
#
# FETCH_ONLY=1 copies the jars and exits. The worker logs to stdout; it
# is ready when GET /health answers 200.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${COMPAT_CACHE:-$HOME/.cache/samsa-compat}
version=${KAFKA_VERSION:-4.3.0}
java=${JAVA:-java}
libs=$cache/connect-libs-$version

if [ ! -f "$libs/connect-runtime-$version.jar" ]; then
  echo "== fetch Apache Kafka Connect $version from Maven Central into $libs" >&2
  mkdir -p "$cache"
  rm -rf "$libs.tmp"
  (cd "$here" && mvn -q -B -Dmaven.repo.local="$cache/m2" -Dkafka.version="$version" \
    dependency:copy-dependencies -DoutputDirectory="$libs.tmp") >&2
  mv "$libs.tmp" "$libs"
fi
[ "${FETCH_ONLY:-0}" = 1 ] && exit 0

: "${CONNECT_BOOTSTRAP:?}" "${CONNECT_DIR:?}" "${CONNECT_PORT:?}"
group=${CONNECT_GROUP:-connect-diff}
mkdir -p "$CONNECT_DIR"
cat >"$CONNECT_DIR/worker.properties" <<PROPS
bootstrap.servers=$CONNECT_BOOTSTRAP
group.id=$group
config.storage.topic=$group-configs
offset.storage.topic=$group-offsets
status.storage.topic=$group-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
listeners=http://127.0.0.1:$CONNECT_PORT
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
offset.flush.interval.ms=1000
PROPS
exec "$java" -Xmx512m -Xms256m -XX:+UseG1GC -Dlog4j2.configurationFile="$here/log4j2.properties" \
  -cp "$libs/*" org.apache.kafka.connect.cli.ConnectDistributed "$CONNECT_DIR/worker.properties"
