# Shared shell helpers for the compatibility suites. Source it.

# start_samsa DIR: starts $SAMSA_BIN serve on a free loopback port with its
# data and log in DIR; sets SAMSA_PID and SAMSA_BOOTSTRAP. With
# registry as its second argument the broker runs its Schema Registry too
# (samsa.schema.registry.listener, on a port the kernel picks), whose URL
# goes in SAMSA_REGISTRY_URL once it serves: the registry suite drives
# serve's own registry. Otherwise the registry is off, so that its
# _schemas topic and group do not show in the other suites' listings.
start_samsa() {
  local dir=$1 addr="" reg="" listener=""
  unset SAMSA_REGISTRY_URL
  [ "${2:-}" = registry ] && listener=127.0.0.1:0
  mkdir -p "$dir"
  "$SAMSA_BIN" serve --listeners PLAINTEXT://127.0.0.1:0 --log.dirs "$dir/data" --override samsa.http.listener= --override samsa.schema.registry.listener=$listener --override samsa.rest.listener= >"$dir/broker.log" 2>&1 &
  SAMSA_PID=$!
  for _ in $(seq 600); do
    addr=$(grep -o 'listeners="PLAINTEXT://[0-9.:]*' "$dir/broker.log" | head -n1 | sed 's|listeners="PLAINTEXT://||') || true
    if [ -n "$listener" ]; then
      reg=$(grep 'msg="schema registry serving"' "$dir/broker.log" | grep -o 'url=http://[0-9.:]*' | head -n1 | sed 's|url=||') || true
    else
      reg=none
    fi
    [ -n "$addr" ] && [ -n "$reg" ] && break
    kill -0 "$SAMSA_PID" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$addr" ] || [ -z "$reg" ]; then
    echo "samsa did not start (or its registry did not serve):" >&2
    cat "$dir/broker.log" >&2
    return 1
  fi
  SAMSA_BOOTSTRAP=$addr
  export SAMSA_BOOTSTRAP SAMSA_PID
  if [ -n "$listener" ]; then
    SAMSA_REGISTRY_URL=$reg
    export SAMSA_REGISTRY_URL
  fi
}

# start_secure_samsa DIR: the security part's broker (README, "Security"):
# a throwaway CA and certificates in DIR/tls, then $SAMSA_BIN serve with the
# listeners PLAINTEXT (for the harnesses and tools), SSL, MTLS (SSL with
# ssl.client.auth=required), SASL_PLAINTEXT and SASL_SSL, the last two with
# PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (unsecured tokens),
# each on a free loopback port, and StandardAuthorizer (PLAINTEXT's
# User:ANONYMOUS a super user, a resource without ACLs open to everyone,
# the topics named SAMSA_PRINCIPAL_TOPIC_PREFIX... the client certificate's
# principal's only) unless the broker refuses authorizer.class.name; then
# the SCRAM user.
# Sets SAMSA_PID and exports the README's variables. Run from the
# repository's root.
start_secure_samsa() {
  local dir=$1 line="" authz
  mkdir -p "$dir"
  go build -o "$dir/secure" ./test/compat/secure && "$dir/secure" init "$dir/tls" || return 1
  export SAMSA_PLAIN_USER=alice SAMSA_PLAIN_PASSWORD=alice-secret
  export SAMSA_SCRAM_USER=carol SAMSA_SCRAM_PASSWORD=carol-secret
  export SAMSA_UNKNOWN_USER=mallory SAMSA_WRONG_PASSWORD=not-the-password
  for authz in org.apache.kafka.metadata.authorizer.StandardAuthorizer ""; do
    rm -rf "$dir/data"
    secure_serve "$dir" "$authz"
    for _ in $(seq 200); do
      line=$(grep -o 'listeners="[^"]*"' "$dir/broker.log" | head -n1) || true
      [ -n "$line" ] && break
      kill -0 "$SAMSA_PID" 2>/dev/null || break
      sleep 0.05
    done
    [ -n "$line" ] && break
    stop_samsa
    grep -q 'authorizer.class.name: .*not supported' "$dir/broker.log" || break
  done
  if [ -z "$line" ]; then
    echo "the secured samsa did not start:" >&2
    cat "$dir/broker.log" >&2
    return 1
  fi
  export SAMSA_AUTHORIZER=$authz
  SAMSA_BOOTSTRAP=$(listener_addr "$line" PLAINTEXT)
  SAMSA_SSL_BOOTSTRAP=$(listener_addr "$line" SSL)
  SAMSA_MTLS_BOOTSTRAP=$(listener_addr "$line" MTLS)
  SAMSA_SASL_PLAINTEXT_BOOTSTRAP=$(listener_addr "$line" SASL_PLAINTEXT)
  SAMSA_SASL_SSL_BOOTSTRAP=$(listener_addr "$line" SASL_SSL)
  export SAMSA_BOOTSTRAP SAMSA_SSL_BOOTSTRAP SAMSA_MTLS_BOOTSTRAP SAMSA_SASL_PLAINTEXT_BOOTSTRAP SAMSA_SASL_SSL_BOOTSTRAP
  . "$dir/tls/env.sh"
  "$dir/secure" scram-users -admin "$SAMSA_BOOTSTRAP" -sasl "$SAMSA_SASL_PLAINTEXT_BOOTSTRAP" \
    -user "$SAMSA_SCRAM_USER" -password "$SAMSA_SCRAM_PASSWORD" || return 1
  export SAMSA_PRINCIPAL_TOPIC_PREFIX=compat-principal-
  if [ -n "$SAMSA_AUTHORIZER" ]; then
    "$dir/secure" allow -admin "$SAMSA_BOOTSTRAP" -principal "$SAMSA_CLIENT_PRINCIPAL" \
      -topic-prefix "$SAMSA_PRINCIPAL_TOPIC_PREFIX" || return 1
  fi
}

# secure_serve DIR AUTHORIZER: starts start_secure_samsa's broker in the
# background (SAMSA_PID), with authorizer.class.name AUTHORIZER unless empty.
secure_serve() {
  local dir=$1 mechs=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER l
  local plain_jaas="org.apache.kafka.common.security.plain.PlainLoginModule required user_$SAMSA_PLAIN_USER=\"$SAMSA_PLAIN_PASSWORD\";"
  local oauth_jaas="org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
  local args=(serve --log.dirs "$dir/data" --override samsa.http.listener= --override samsa.schema.registry.listener= --override samsa.rest.listener=
    --listeners PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0
    --override listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
    --override ssl.keystore.type=PEM --override "ssl.keystore.location=$dir/tls/broker.pem"
    --override ssl.truststore.type=PEM --override "ssl.truststore.location=$dir/tls/ca.pem"
    --override listener.name.mtls.ssl.client.auth=required
    --override 'listener.name.mtls.ssl.principal.mapping.rules=RULE:^CN=([^,]+),.*$/$1/,DEFAULT')
  for l in sasl_plaintext sasl_ssl; do
    args+=(--override "listener.name.$l.sasl.enabled.mechanisms=$mechs"
      --override "listener.name.$l.plain.sasl.jaas.config=$plain_jaas"
      --override "listener.name.$l.oauthbearer.sasl.jaas.config=$oauth_jaas")
  done
  if [ -n "$2" ]; then
    args+=(--override "authorizer.class.name=$2" --override super.users=User:ANONYMOUS
      --override allow.everyone.if.no.acl.found=true)
  fi
  "$SAMSA_BIN" "${args[@]}" >"$dir/broker.log" 2>&1 &
  SAMSA_PID=$!
  export SAMSA_PID
}

# listener_addr LINE NAME: the address of listener NAME in the broker's
# start-up line's listeners="PLAINTEXT://127.0.0.1:1234 (bound ...), SSL://...".
listener_addr() {
  local v=${1#listeners=}
  tr -d '"' <<<"$v" | tr ',' '\n' | sed -n "s|^ *$2://\([0-9.:]*\).*|\1|p"
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
