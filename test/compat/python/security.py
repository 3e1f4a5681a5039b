"""The Python suite's security part (test/compat/README.md, "Security").

With COMPAT_PART=security, compat.py runs these features instead of its
own, against the broker lib.sh's start_secure_samsa starts, whose listeners
and credentials come in the README's variables. A protocol or mechanism
feature creates a topic, produces 10 records, takes the end offset and
reads to it, every step over that listener (compat.py's own helpers, in a
subclass whose every client connects there); an auth-* feature makes each
refused login and wants the client's own authentication error for it, well
before the feature's timeout.
"""

import os
import time

from compat import Confluent, Failure, KafkaPython, Unsupported, check, topic_name, verify_produced

FEATURES = [
    "ssl", "mtls", "mtls-principal",
    "sasl-plain", "sasl-scram-sha-256", "sasl-scram-sha-512", "sasl-oauthbearer",
    "sasl-ssl-plain", "sasl-ssl-scram-sha-256", "sasl-ssl-scram-sha-512", "sasl-ssl-oauthbearer",
    "auth-wrong-password", "auth-unknown-user", "auth-expired-token", "auth-no-client-certificate",
]

# A refused login must be reported within this many seconds.
REFUSAL_DEADLINE = 20

MECHANISMS = {"plain": "PLAIN", "scram-sha-256": "SCRAM-SHA-256", "scram-sha-512": "SCRAM-SHA-512",
              "oauthbearer": "OAUTHBEARER"}


def env(name):
    v = os.environ.get(name)
    if not v:
        raise Failure("%s is not set: the security part runs against lib.sh's start_secure_samsa" % name)
    return v


def sasl(mechanism, over_tls):
    """The connection with mechanism over SASL_PLAINTEXT (SASL_SSL when
    over_tls), as the mechanism's user."""
    c = {"protocol": "SASL_PLAINTEXT", "bootstrap": env("SAMSA_SASL_PLAINTEXT_BOOTSTRAP"), "mechanism": mechanism}
    if over_tls:
        c.update(protocol="SASL_SSL", bootstrap=env("SAMSA_SASL_SSL_BOOTSTRAP"), ca=env("SAMSA_CA_FILE"))
    if mechanism == "PLAIN":
        c.update(user=env("SAMSA_PLAIN_USER"), password=env("SAMSA_PLAIN_PASSWORD"))
    elif mechanism == "OAUTHBEARER":
        c.update(user=env("SAMSA_OAUTH_SUBJECT"), token=env("SAMSA_OAUTH_TOKEN"))
    else:
        c.update(user=env("SAMSA_SCRAM_USER"), password=env("SAMSA_SCRAM_PASSWORD"))
    return c


def connection(feature):
    """The connection a protocol or mechanism feature uses."""
    if feature == "ssl":
        return {"protocol": "SSL", "bootstrap": env("SAMSA_SSL_BOOTSTRAP"), "ca": env("SAMSA_CA_FILE")}
    if feature in ("mtls", "mtls-principal"):
        return {"protocol": "SSL", "bootstrap": env("SAMSA_MTLS_BOOTSTRAP"), "ca": env("SAMSA_CA_FILE"),
                "cert": env("SAMSA_CLIENT_CERT"), "key": env("SAMSA_CLIENT_KEY")}
    if feature == "mtls-other":
        return {"protocol": "SSL", "bootstrap": env("SAMSA_MTLS_BOOTSTRAP"), "ca": env("SAMSA_CA_FILE"),
                "cert": env("SAMSA_OTHER_CLIENT_CERT"), "key": env("SAMSA_OTHER_CLIENT_KEY")}
    if feature.startswith("sasl-ssl-"):
        return sasl(MECHANISMS[feature[len("sasl-ssl-"):]], True)
    return sasl(MECHANISMS[feature[len("sasl-"):]], False)


def refusals(feature):
    """(what, connection) for each login an auth-* feature makes."""
    out = []
    if feature in ("auth-wrong-password", "auth-unknown-user"):
        for m in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
            c = sasl(m, False)
            if feature == "auth-wrong-password":
                c["password"] = env("SAMSA_WRONG_PASSWORD")
            else:
                c["user"] = env("SAMSA_UNKNOWN_USER")
            out.append((m, c))
    elif feature == "auth-expired-token":
        c = sasl("OAUTHBEARER", False)
        c["token"] = env("SAMSA_OAUTH_TOKEN_EXPIRED")
        out.append(("OAUTHBEARER", c))
    else:  # auth-no-client-certificate
        out.append(("TLS without a client certificate",
                    {"protocol": "SSL", "bootstrap": env("SAMSA_MTLS_BOOTSTRAP"), "ca": env("SAMSA_CA_FILE")}))
    return out


def certificate_refused(text):
    """The TLS alert of a server that wants a client certificate and got
    none: "certificate required" in TLS 1.3, "bad certificate" or
    "handshake failure" in TLS 1.2, as OpenSSL spells them."""
    t = text.lower().replace("_", " ")
    return any(m in t for m in ("certificate required", "bad certificate", "handshake failure"))


# --------------------------------------------------------------------------
# confluent-kafka-python


class SecuredConfluent(Confluent):
    """compat.py's Confluent with every client connecting with conn."""

    def __init__(self, deadline, conn, connect=True):
        """connect=False makes no admin client: for a login meant to fail."""
        self.sec = conn
        if connect:
            super().__init__(deadline)
        else:
            import confluent_kafka
            self.ck, self.dl = confluent_kafka, deadline

    def conf(self, **kw):
        c = super().conf(**kw)
        s = self.sec
        c.update({"bootstrap.servers": s["bootstrap"], "security.protocol": s["protocol"]})
        if "ca" in s:
            c["ssl.ca.location"] = s["ca"]
        if "cert" in s:
            c.update({"ssl.certificate.location": s["cert"], "ssl.key.location": s["key"]})
        if "mechanism" in s:
            c["sasl.mechanism"] = s["mechanism"]
            if s["mechanism"] == "OAUTHBEARER":
                # librdkafka refuses a token whose lifetime has passed, so
                # the lifetime handed over is an hour from now for every
                # token: it only schedules the client's refresh; the broker
                # judges the token's own exp claim.
                token = s["token"]
                c["oauth_cb"] = lambda _config: (token, time.time() + 3600)
            else:
                c.update({"sasl.username": s["user"], "sasl.password": s["password"]})
        return c

    def login(self):
        """Starts a producer, which connects at once, and returns the first
        error its error_cb reports (librdkafka retries a refused login on its
        own; "all brokers down" follows the cause and counts only when
        nothing else comes), or None once metadata came back: the login
        worked."""
        errors = []
        c = self.conf()
        c["error_cb"] = errors.append  # not through conf(), which makes "error.cb" of it
        p = self.ck.Producer(c)
        end = time.monotonic() + REFUSAL_DEADLINE
        while time.monotonic() < end:
            p.poll(0.1)
            firsts = [e for e in errors if e.code() != self.ck.KafkaError._ALL_BROKERS_DOWN]
            if firsts:
                return firsts[0]
            try:
                if p.list_topics(timeout=0.5).brokers:
                    return None
            except self.ck.KafkaException:
                pass  # the error_cb has the cause
        return errors[0] if errors else "no error within %ds" % REFUSAL_DEADLINE

    def auth_failed(self, err):
        return isinstance(err, self.ck.KafkaError) and err.code() == self.ck.KafkaError._AUTHENTICATION

    def write_one(self, topic):
        """Produces one record: its delivery error, or None."""
        errs = []
        p = self.ck.Producer(self.conf(message_timeout_ms=5000))
        p.produce(topic, key=b"k", value=b"v", partition=0, on_delivery=lambda err, _msg: errs.append(err))
        p.flush(10)
        return errs[0] if errs else "no delivery report within 10s"

    def topic_denied(self, err):
        return isinstance(err, self.ck.KafkaError) and err.code() == self.ck.KafkaError.TOPIC_AUTHORIZATION_FAILED


# --------------------------------------------------------------------------
# kafka-python


class TokenProvider:
    """kafka-python's OAUTHBEARER token provider: the same token every time."""

    def __init__(self, token):
        from kafka.net.sasl.oauth import AbstractTokenProvider

        class P(AbstractTokenProvider):
            def token(self):
                return token

        self.provider = P()


class SecuredKafkaPython(KafkaPython):
    """compat.py's KafkaPython with every client connecting with conn."""

    def __init__(self, deadline, conn, connect=True):
        """connect=False makes no admin client: for a login meant to fail."""
        self.sec = conn
        if connect:
            super().__init__(deadline)
        else:
            import kafka
            self.k, self.dl = kafka, deadline

    def kw(self):
        s = self.sec
        kw = {"bootstrap_servers": s["bootstrap"], "security_protocol": s["protocol"]}
        if "ca" in s:
            kw["ssl_cafile"] = s["ca"]
        if "cert" in s:
            kw.update(ssl_certfile=s["cert"], ssl_keyfile=s["key"])
        if "mechanism" in s:
            kw["sasl_mechanism"] = s["mechanism"]
            if s["mechanism"] == "OAUTHBEARER":
                kw["sasl_oauth_token_provider"] = TokenProvider(s["token"]).provider
            else:
                kw.update(sasl_plain_username=s["user"], sasl_plain_password=s["password"])
        return kw

    # Why an auth-* feature is unsupported: the login still has to fail,
    # and what the client logged goes in the detail.
    REFUSAL_UNTOLD = (
        "kafka-python 3.0.12 cannot tell its caller a refused login: its bootstrap logs the connection's error, "
        "tries again until bootstrap_timeout_ms and raises KafkaTimeoutError('Unable to bootstrap')")
    # And it mostly logs "socket disconnected" for a refused SASL login: the
    # broker answers SASL_AUTHENTICATION_FAILED and closes the connection at
    # once (as Kafka does); kafka/net/transport.py's _sock_recv returns the
    # answer read before the EOF together with the error, and the reader
    # aborts without handing the answer on.
    DISCONNECTED = ("('socket disconnected': kafka-python drops the SASL_AUTHENTICATION_FAILED answer that arrives "
                    "with the connection's close, kafka/net/transport.py _sock_recv)")
    BOOTSTRAP_TIMEOUT_MS = 3000

    def login(self):
        """A new admin client, which bootstraps as it starts: the first
        error kafka-python logged for the connection, else the one it raised,
        else None."""
        import logging
        logged = []

        class Keep(logging.Handler):
            def emit(self, record):
                if isinstance(record.args, tuple):
                    logged.extend(a for a in record.args if isinstance(a, Exception))

        keep = Keep(level=logging.WARNING)
        logging.getLogger("kafka").addHandler(keep)
        raised = None
        try:
            a = self.k.KafkaAdminClient(bootstrap_timeout_ms=self.BOOTSTRAP_TIMEOUT_MS, **self.kw())
            a.close()
        except Exception as e:  # noqa: the error is the result
            raised = e
        finally:
            logging.getLogger("kafka").removeHandler(keep)
        if raised is None:
            return None
        return logged[0] if logged else raised

    def auth_failed(self, err):
        from kafka.errors import SaslAuthenticationFailedError
        return isinstance(err, SaslAuthenticationFailedError)

    def write_one(self, topic):
        """Produces one record: the exception, or None."""
        p = None
        try:
            p = self.k.KafkaProducer(max_block_ms=5000, **self.kw())
            p.send(topic, key=b"k", value=b"v", partition=0).get(timeout=10)
        except Exception as e:  # noqa: the error is the result
            return e
        finally:
            if p is not None:
                p.close(timeout=5)
        return None

    def topic_denied(self, err):
        from kafka.errors import TopicAuthorizationFailedError
        return isinstance(err, TopicAuthorizationFailedError)


SECURED = {"confluent-kafka-python": SecuredConfluent, "kafka-python": SecuredKafkaPython}


def run(client, feature, dl):
    """Runs one feature; raises Failure or Unsupported, returns a note for a
    pass."""
    if feature.startswith("auth-"):
        return refused(client, feature, dl)
    if feature == "mtls-principal":
        return principal(client, feature, dl)
    impl = SECURED[client](dl, connection(feature))
    t = topic_name(client, feature)
    impl.create(t, 1)
    round_trip(impl, t)
    return ""


def round_trip(impl, t):
    """10 records produced to partition 0 of t, read back to the end offset
    and compared, all with impl."""
    p = impl.producer()
    acked = impl.produce(p, t, [(b"k%d" % i, b"v%d" % i, 0, None, None) for i in range(10)])
    if hasattr(p, "close"):
        p.close()
    check(len(acked) == 10, "acked %d of 10" % len(acked))
    impl.inject(t, acked)
    verify_produced(acked, impl.read(t, 1))


def principal(client, feature, dl):
    """mtls-principal: start_secure_samsa's ACL lets only the client
    certificate's principal use the topics named with its prefix; another
    subject's certificate must be refused with TOPIC_AUTHORIZATION_FAILED
    (tried until the ACL is in force), then the round trip with the client's
    certificate must pass. compat.py runs it only where the broker has an
    authorizer."""
    t = env("SAMSA_PRINCIPAL_TOPIC_PREFIX") + topic_name(client, feature)
    {"confluent-kafka-python": Confluent, "kafka-python": KafkaPython}[client](dl).create(t, 1)  # PLAINTEXT
    other = SECURED[client](dl, connection("mtls-other"), connect=False)
    while True:
        err = other.write_one(t)
        if err is not None and other.topic_denied(err):
            break
        if dl.left() < 20:
            raise Failure("another subject's certificate wrote to %s, which only %s may: %s, want "
                          "TOPIC_AUTHORIZATION_FAILED" % (t, env("SAMSA_CLIENT_PRINCIPAL"), err))
        time.sleep(0.3)  # the ACL is not in force yet
    round_trip(SECURED[client](dl, connection("mtls-principal")), t)
    return "%s (subject %s) wrote and read a topic only it may; another subject: %s: %s" % (
        env("SAMSA_CLIENT_PRINCIPAL"), env("SAMSA_CLIENT_SUBJECT"), type(err).__name__, str(err)[:120])


def refused(client, feature, dl):
    """Each login of the feature must fail with the client's error for it,
    within REFUSAL_DEADLINE; the errors go in the note. A client that cannot
    tell its caller (REFUSAL_UNTOLD) is unsupported, once each login did
    fail."""
    seen = []
    untold = getattr(SECURED[client], "REFUSAL_UNTOLD", None)
    for what, conn in refusals(feature):
        impl = SECURED[client](dl, conn, connect=False)
        start = time.monotonic()
        err = impl.login()
        took = time.monotonic() - start
        if err is None:
            raise Failure("%s: the login succeeded, want it refused" % what)
        text = "%s: %s" % (type(err).__name__, err)
        if not untold and "mechanism" not in conn and not certificate_refused(text):
            raise Failure("%s: want a TLS error for the missing certificate, got after %.1fs: %s" % (what, took, text))
        if not untold and "mechanism" in conn and not impl.auth_failed(err):
            raise Failure("%s: want the client's authentication error, got after %.1fs: %s" % (what, took, text))
        seen.append("%s: %s (%.1fs)" % (what, text[:160], took))
    if untold:
        note = "; ".join(seen)
        if "socket disconnected" in note:
            note += " " + SECURED[client].DISCONNECTED
        raise Unsupported("%s; each login failed, logging: %s" % (untold, note))
    return "; ".join(seen)
