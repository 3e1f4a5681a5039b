#!/usr/bin/env bash
# kcat (librdkafka) in the security part (../README.md, "Security"): over
# each secured listener and mechanism, 10 records produced, the end offset
# queried (-Q) and the partition read to it (-e), every kcat run over that
# listener; then the refused logins, each of which must end kcat with
# librdkafka's authentication error at once. The topics come from the
# samsa CLI through the PLAINTEXT listener. kcat's plain features are
# test/kcat.sh's: in the other parts this suite has nothing to run.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
: "${SAMSA_BOOTSTRAP:?}" "${COMPAT_RESULTS:?}" "${SAMSA_BIN:?}"
if [ "${COMPAT_PART:-}" != security ]; then
  echo "kcat: only in the security part (test/kcat.sh covers the rest)"
  exit 0
fi
if ! command -v kcat >/dev/null; then
  echo "kcat: not installed"
  result kcat "" ssl fail "kcat is not installed"
  exit 1
fi
# "Version 1.7.1 (JSON, ..., librdkafka 2.0.2 builtin.features=...)"
version=$(kcat -V 2>&1 | sed -n 's/^Version \([^ ]*\) .*librdkafka \([^ ]*\) .*/\1 (librdkafka \2)/p' | head -n1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run=$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
failed=0
# A refused login must end kcat within this many seconds.
refusal_deadline=20
# librdkafka before 2.6.1 repeats the client nonce in SCRAM's
# client-final-message (confluentinc/librdkafka#4895); a broker that checks
# the nonce as RFC 5802 says, as Samsa and Apache Kafka 4.x do, refuses
# every such login. Debian's kcat 1.7.1 has librdkafka 2.0.2.
rdkafka=$(kcat -V 2>&1 | sed -n 's/.*librdkafka \([0-9.]*\).*/\1/p' | head -n1)
scram_nonce_bug=0
if [ "$(printf '%s\n2.6.1\n' "$rdkafka" | sort -V | head -n1)" != 2.6.1 ]; then scram_nonce_bug=1; fi
scram_why="librdkafka $rdkafka (before 2.6.1) repeats the client nonce in SCRAM's client-final-message (confluentinc/librdkafka#4895); Samsa, as Apache Kafka 4.x, checks the nonce as RFC 5802 says and refuses the login"

pass() { result kcat "$version" "$1" pass "${2:-}"; printf '%-28s pass  %s\n' "$1" "${2:-}"; }
fail() { result kcat "$version" "$1" fail "$2"; printf '%-28s FAIL  %s\n' "$1" "$2"; failed=1; }
unsupported() { result kcat "$version" "$1" unsupported "$2"; printf '%-28s n/a   %s\n' "$1" "$2"; }
# tidy: librdkafka's lines without what changes from run to run (the
# broker's address, the time taken), for a detail.
tidy() { sed -E 's#[a-z_]+://[0-9.]+:[0-9]+/[a-z0-9]+: ##g; s# \(after [0-9]+ms in state [A-Z_]+[^)]*\)##g'; }
# oneline FILE: the file's first lines, one line, for a detail.
oneline() { grep -v '^\s*$' "$1" | head -n 4 | tidy | cut -c1-300 | tr '\n' ' '; }
# first_error FILE: kcat's first "% ERROR" line.
first_error() { grep -m1 '^% ERROR' "$1" | tidy | cut -c1-240; }

# The settings of each connection, as kcat -X arguments.
tls_args() { # [cert]
  local a=(-X ssl.ca.location="$SAMSA_CA_FILE")
  [ "${1:-}" = cert ] && a+=(-X ssl.certificate.location="$SAMSA_CLIENT_CERT" -X ssl.key.location="$SAMSA_CLIENT_KEY")
  printf '%s\n' "${a[@]}"
}
# sasl_args MECHANISM [USER PASSWORD]: OAUTHBEARER is librdkafka's own
# unsecured token (kcat has no token callback), for SAMSA_OAUTH_SUBJECT.
sasl_args() {
  local m=$1
  printf '%s\n' -X "sasl.mechanisms=$m"
  case $m in
    PLAIN) printf '%s\n' -X "sasl.username=${2:-$SAMSA_PLAIN_USER}" -X "sasl.password=${3:-$SAMSA_PLAIN_PASSWORD}" ;;
    OAUTHBEARER) printf '%s\n' -X enable.sasl.oauthbearer.unsecure.jwt=true \
      -X "sasl.oauthbearer.config=principal=$SAMSA_OAUTH_SUBJECT" ;;
    *) printf '%s\n' -X "sasl.username=${2:-$SAMSA_SCRAM_USER}" -X "sasl.password=${3:-$SAMSA_SCRAM_PASSWORD}" ;;
  esac
}
# conn FEATURE: "ADDRESS" then the -X arguments, one a line.
conn() {
  local f=$1 m
  case $f in
    ssl) echo "$SAMSA_SSL_BOOTSTRAP"; printf '%s\n' -X security.protocol=SSL; tls_args ;;
    mtls) echo "$SAMSA_MTLS_BOOTSTRAP"; printf '%s\n' -X security.protocol=SSL; tls_args cert ;;
    sasl-ssl-*) m=${f#sasl-ssl-}; echo "$SAMSA_SASL_SSL_BOOTSTRAP"; printf '%s\n' -X security.protocol=SASL_SSL
      tls_args; sasl_args "${m^^}" ;;
    sasl-*) m=${f#sasl-}; echo "$SAMSA_SASL_PLAINTEXT_BOOTSTRAP"; printf '%s\n' -X security.protocol=SASL_PLAINTEXT
      sasl_args "${m^^}" ;;
  esac
}

# inject TOPIC LINE: the mutation hook (../README.md): one more copy of a
# record, through the PLAINTEXT listener, the check not told.
inject() {
  case "${COMPAT_INJECT_DUPLICATE:-}" in ''|0) return ;; esac
  printf '%s\n' "$2" | kcat -b "$SAMSA_BOOTSTRAP" -P -t "$1" -p 0 -K: -X topic.request.required.acks=-1
}

# round_trip FEATURE [TOPIC]: over FEATURE's connection (mtls-principal:
# mtls's), to a new topic or TOPIC. Returns 1 when it reported a fail.
round_trip() {
  local f=$1 topic=${2:-kcat-$1-$run} addr args end want=$work/$1.want got=$work/$1.got err=$work/$1.err
  mapfile -t args < <(conn "${f/mtls-principal/mtls}")
  addr=${args[0]} args=("${args[@]:1}")
  if [ -z "${2:-}" ] && ! "$SAMSA_BIN" --bootstrap-server "$SAMSA_BOOTSTRAP" topic create "$topic" --partitions 1 >"$err" 2>&1; then
    fail "$f" "create topic: $(oneline "$err")"; return 1
  fi
  : >"$want"
  for i in $(seq 0 9); do echo "k$i:$f-v$i" >>"$want"; done
  if ! timeout 60 kcat -b "$addr" "${args[@]}" -P -t "$topic" -p 0 -K: -X topic.request.required.acks=-1 <"$want" 2>"$err"; then
    if [ $scram_nonce_bug = 1 ] && [[ $f = *scram* ]] &&
       grep -q 'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM' "$err"; then
      unsupported "$f" "$scram_why: $(first_error "$err")"; return 1
    fi
    fail "$f" "produce: $(oneline "$err")"; return 1
  fi
  inject "$topic" "k9:$f-v9"
  # The end offset from the client's own ListOffsets (-Q, timestamp -1:
  # latest): "TOPIC [0] offset N".
  end=$(timeout 60 kcat -b "$addr" "${args[@]}" -Q -t "$topic:0:-1" 2>"$err" | sed -n 's/.* \[0\] offset \([0-9]*\)$/\1/p')
  if [ -z "$end" ]; then
    fail "$f" "query the end offset: $(oneline "$err")"; return 1
  fi
  # -e: to the partition's end, which must be the end offset queried.
  if ! timeout 60 kcat -b "$addr" "${args[@]}" -C -t "$topic" -p 0 -o beginning -e -q -f '%o %k:%s\n' >"$got" 2>"$err"; then
    fail "$f" "consume: $(oneline "$err")"; return 1
  fi
  local last
  last=$(tail -n 1 "$got" | cut -d' ' -f1)
  if [ "$((last + 1))" != "$end" ]; then
    fail "$f" "read to offset ${last:-none}, the end offset is $end"; return 1
  fi
  if ! diff <(cat "$want") <(cut -d' ' -f2- "$got") >"$work/$f.diff"; then
    fail "$f" "read $(wc -l <"$got") records to the end offset $end, produced 10: $(tr '\n' ' ' <"$work/$f.diff" | cut -c1-300)"; return 1
  fi
  [ -n "${2:-}" ] || pass "$f"
}

# certificate_refused FILE: the TLS alert of a server that wants a client
# certificate and got none, as OpenSSL spells it (TLS 1.3, then 1.2).
certificate_refused() { grep -qiE 'certificate required|bad certificate|handshake failure' "$1"; }

# refused FEATURE WHAT ADDRESS ARGS...: kcat -P with one record must end at
# once with librdkafka's "Local: Authentication failure" (a SASL login),
# or the TLS alert for the missing certificate.
refused() {
  local f=$1 what=$2 addr=$3 err=$work/$1-$RANDOM.err start took; shift 3
  start=$SECONDS
  if echo "k:v" | timeout "$refusal_deadline" kcat -b "$addr" "$@" -P -t "kcat-login-$run" -X message.timeout.ms=10000 2>"$err"; then
    refusal="$what: kcat delivered the record, want the login refused"; return 1
  fi
  took=$((SECONDS - start))
  if [ "$took" -ge "$refusal_deadline" ]; then
    refusal="$what: no error within ${refusal_deadline}s: $(oneline "$err")"; return 1
  fi
  if [ "$what" = "TLS without a client certificate" ]; then
    certificate_refused "$err" || { refusal="$what: want a TLS error for the missing certificate: $(oneline "$err")"; return 1; }
  else
    grep -q '% ERROR: Local: Authentication failure' "$err" ||
      { refusal="$what: want librdkafka's authentication failure: $(oneline "$err")"; return 1; }
  fi
  refusal="$what: $(first_error "$err") (${took}s)"
}

echo "kcat: $version, security part"
for f in ssl mtls sasl-plain sasl-scram-sha-256 sasl-scram-sha-512 sasl-oauthbearer \
  sasl-ssl-plain sasl-ssl-scram-sha-256 sasl-ssl-scram-sha-512 sasl-ssl-oauthbearer; do
  round_trip "$f"
done

# mtls-principal: start_secure_samsa's ACL lets only the client
# certificate's principal use the topics named with its prefix; another
# subject's certificate must be refused with "Topic authorization failed"
# (tried until the ACL is in force), then the round trip must pass.
if [ -z "${SAMSA_AUTHORIZER:-}" ]; then
  echo "mtls-principal: not run, the broker has no authorizer (SAMSA_AUTHORIZER is empty)"
else
  topic="${SAMSA_PRINCIPAL_TOPIC_PREFIX}kcat-$run" err=$work/principal.err
  "$SAMSA_BIN" --bootstrap-server "$SAMSA_BOOTSTRAP" topic create "$topic" --partitions 1 >/dev/null
  denied=""
  for _ in $(seq 30); do
    echo "k:v" | timeout 20 kcat -b "$SAMSA_MTLS_BOOTSTRAP" -X security.protocol=SSL -X ssl.ca.location="$SAMSA_CA_FILE" \
      -X ssl.certificate.location="$SAMSA_OTHER_CLIENT_CERT" -X ssl.key.location="$SAMSA_OTHER_CLIENT_KEY" \
      -P -t "$topic" -p 0 -K: -X message.timeout.ms=5000 2>"$err"
    if grep -q 'Topic authorization failed' "$err"; then denied=$(grep -m1 'Topic authorization failed' "$err" | tidy | cut -c1-160); break; fi
    sleep 0.5
  done
  if [ -z "$denied" ]; then
    fail mtls-principal "another subject's certificate wrote to $topic, which only $SAMSA_CLIENT_PRINCIPAL may: $(oneline "$err")"
  elif round_trip mtls-principal "$topic"; then
    pass mtls-principal "$SAMSA_CLIENT_PRINCIPAL (subject $SAMSA_CLIENT_SUBJECT) wrote and read a topic only it may; another subject: $denied"
  fi
fi

"$SAMSA_BIN" --bootstrap-server "$SAMSA_BOOTSTRAP" topic create "kcat-login-$run" --partitions 1 >/dev/null
for f in auth-wrong-password auth-unknown-user; do
  notes=() ok=1 mechs=(PLAIN SCRAM-SHA-256 SCRAM-SHA-512)
  # With the nonce bug a SCRAM login fails whatever the password: no check.
  [ $scram_nonce_bug = 1 ] && mechs=(PLAIN)
  for m in "${mechs[@]}"; do
    if [ $f = auth-wrong-password ]; then
      case $m in PLAIN) u=$SAMSA_PLAIN_USER ;; *) u=$SAMSA_SCRAM_USER ;; esac
      pw=$SAMSA_WRONG_PASSWORD
    else
      u=$SAMSA_UNKNOWN_USER
      case $m in PLAIN) pw=$SAMSA_PLAIN_PASSWORD ;; *) pw=$SAMSA_SCRAM_PASSWORD ;; esac
    fi
    mapfile -t a < <(sasl_args "$m" "$u" "$pw")
    if refused $f "$m" "$SAMSA_SASL_PLAINTEXT_BOOTSTRAP" -X security.protocol=SASL_PLAINTEXT "${a[@]}"; then
      notes+=("$refusal")
    else
      fail $f "$refusal"; ok=0; break
    fi
  done
  [ $scram_nonce_bug = 1 ] && notes+=("SCRAM not tried: $scram_why whatever the password")
  if [ $ok = 1 ]; then joined=$(printf '%s; ' "${notes[@]}"); pass $f "${joined%; }"; fi
done
unsupported auth-expired-token "kcat has no token callback: its OAUTHBEARER tokens come from librdkafka's unsecured builder (sasl.oauthbearer.config), which makes none already expired (lifeSeconds=0 sends nothing; lifeSeconds=-10 crashes kcat 1.7.1 with librdkafka 2.0.2), and librdkafka refuses to send a token past its lifetime"
mapfile -t a < <(tls_args)
if refused auth-no-client-certificate "TLS without a client certificate" "$SAMSA_MTLS_BOOTSTRAP" -X security.protocol=SSL "${a[@]}"; then
  pass auth-no-client-certificate "$refusal"
else
  fail auth-no-client-certificate "$refusal"
fi
exit $failed
