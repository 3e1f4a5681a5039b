# Shared shell helpers for the compatibility suites. Source it.

# start_samsa DIR: starts $SAMSA_BIN serve on a free loopback port with its
# data and log in DIR; sets SAMSA_PID and SAMSA_BOOTSTRAP.
start_samsa() {
  local dir=$1 addr=""
  mkdir -p "$dir"
  "$SAMSA_BIN" serve --listeners PLAINTEXT://127.0.0.1:0 --log.dirs "$dir/data" >"$dir/broker.log" 2>&1 &
  SAMSA_PID=$!
  for _ in $(seq 200); do
    addr=$(grep -o 'listeners="PLAINTEXT://[0-9.:]*' "$dir/broker.log" | head -n1 | sed 's|listeners="PLAINTEXT://||') || true
    [ -n "$addr" ] && break
    sleep 0.05
  done
  if [ -z "$addr" ]; then
    echo "samsa did not start:" >&2
    cat "$dir/broker.log" >&2
    return 1
  fi
  SAMSA_BOOTSTRAP=$addr
  export SAMSA_BOOTSTRAP SAMSA_PID
}

# stop_samsa: SIGTERM and wait.
stop_samsa() {
  if [ -n "${SAMSA_PID:-}" ]; then
    kill "$SAMSA_PID" 2>/dev/null || true
    wait "$SAMSA_PID" 2>/dev/null || true
    SAMSA_PID=
  fi
}

# start_cluster DIR NODES: starts $SAMSA_BIN dev cluster with NODES nodes
# on free loopback ports, its directory DIR; sets CLUSTER_PID and
# SAMSA_BOOTSTRAP (every node's address) once the cluster is up.
start_cluster() {
  local dir=$1 nodes=$2 addr="" try
  for try in 1 2 3; do
    rm -rf "$dir"; mkdir -p "$dir"
    # The suites create their topics with replication factor 1, as they
    # do against one node (those created with the broker default get 3):
    # min.insync.replicas 1 lets acks=all succeed on those.
    "$SAMSA_BIN" dev cluster --nodes "$nodes" --base-port 0 --dir "$dir/nodes" \
      --override min.insync.replicas=1 >"$dir/cluster.log" 2>&1 &
    CLUSTER_PID=$!
    for _ in $(seq 1200); do
      addr=$(sed -n 's/^Bootstrap: //p' "$dir/cluster.log" | head -n1) || true
      [ -n "$addr" ] && break
      kill -0 "$CLUSTER_PID" 2>/dev/null || break
      sleep 0.05
    done
    if [ -n "$addr" ]; then
      SAMSA_BOOTSTRAP=$addr
      export SAMSA_BOOTSTRAP CLUSTER_PID
      return 0
    fi
    stop_cluster
    # Free ports are picked before the nodes bind them: another program
    # may take one meanwhile, so a busy port is tried again.
    grep -q "in use" "$dir/cluster.log" || break
  done
  echo "the cluster did not start:" >&2
  cat "$dir/cluster.log" >&2
  return 1
}

# stop_cluster: SIGTERM (every node stops under control) and wait.
stop_cluster() {
  if [ -n "${CLUSTER_PID:-}" ]; then
    kill "$CLUSTER_PID" 2>/dev/null || true
    wait "$CLUSTER_PID" 2>/dev/null || true
    CLUSTER_PID=
  fi
}

# result CLIENT VERSION FEATURE RESULT [DETAIL]: appends one result line.
result() {
  python3 -c 'import json,sys; print(json.dumps({"client":sys.argv[1],"version":sys.argv[2],"feature":sys.argv[3],"result":sys.argv[4],"detail":sys.argv[5] if len(sys.argv)>5 else ""}))' "$@" >>"$COMPAT_RESULTS"
}
