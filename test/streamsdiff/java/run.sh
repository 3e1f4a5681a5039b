#!/usr/bin/env bash
# Runs the Kafka Streams reference topologies of the streams differential
# test (test/streamsdiff, docs/streams/DIFFERENTIAL.md) in the foreground:
# Main.java built with Maven against kafka-streams from Maven Central, the
# classes and jars kept in $COMPAT_CACHE/streamsdiff-VERSION (rebuilt when
# the sources change).
#
#   STREAMS_BOOTSTRAP  the Kafka (or Samsa) cluster, host:port (required)
#   STREAMS_PREFIX     the application IDs' and output topics' prefix (java-)
#   STREAMS_DIR        a directory for state stores and Topology.describe() files (required)
#   KAFKA_VERSION (4.4.0), COMPAT_CACHE (~/.cache/samsa-compat), JAVA (java)
#
# FETCH_ONLY=1 builds and exits. The application prints "RUNNING app-id"
# per application and stops on SIGTERM.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${COMPAT_CACHE:-$HOME/.cache/samsa-compat}
version=${KAFKA_VERSION:-4.4.0}
java=${JAVA:-java}
build=$cache/streamsdiff-$version
stamp=$(cat "$here/pom.xml" "$here"/src/main/java/io/samsa/streamsdiff/*.java | sha256sum | cut -c1-16)

if [ "$(cat "$build/stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "== build the Kafka Streams $version reference topologies into $build" >&2
  mkdir -p "$cache"
  rm -rf "$build"
  (cd "$here" && mvn -q -B -Dmaven.repo.local="$cache/m2" -Dkafka.version="$version" -Dbuild.dir="$build" \
    package dependency:copy-dependencies -DoutputDirectory="$build/libs") >&2
  echo "$stamp" >"$build/stamp"
fi
[ "${FETCH_ONLY:-0}" = 1 ] && exit 0

: "${STREAMS_BOOTSTRAP:?}" "${STREAMS_DIR:?}"
prefix=${STREAMS_PREFIX:-java-}
exec "$java" -Xmx512m -Xms128m -XX:+UseG1GC -Dlog4j2.configurationFile="$here/log4j2.properties" \
  -cp "$build/classes:$build/libs/*" io.samsa.streamsdiff.Main \
  "$STREAMS_BOOTSTRAP" "$prefix" "$STREAMS_DIR/state" "$STREAMS_DIR/describe"
