package samsa.compat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.security.auth.callback.Callback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.AppConfigurationEntry;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.auth.SaslExtensionsCallback;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerToken;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerTokenCallback;

/**
 * The Java client's security part (test/compat/README.md, "Security"): run
 * with COMPAT_PART=security against the broker lib.sh's start_secure_samsa
 * starts, whose listeners and credentials come in the README's variables. A
 * protocol or mechanism feature creates a topic, produces 10 records, takes
 * the end offset and reads to it, every client over that listener
 * (Compat's helpers, with Compat.security set); an auth-* feature makes each
 * refused login and wants the client's authentication exception for it,
 * well before the feature's timeout.
 *
 * Usage: Security RESULTS_FILE [FEATURE...].
 */
public final class Security {
    /** A refused login must be reported within this many seconds. */
    static final long REFUSAL_DEADLINE_S = 20;

    public static void main(String[] args) throws Exception {
        Compat.resultsFile = args[0];
        Set<String> only = new HashSet<>(List.of(args).subList(1, args.length));
        Map<String, Compat.Body> features = new LinkedHashMap<>();
        features.put("ssl", () -> roundTrip("ssl", env("SAMSA_SSL_BOOTSTRAP"), tls(null), null));
        features.put("mtls", () -> roundTrip("mtls", env("SAMSA_MTLS_BOOTSTRAP"), tls("SAMSA_CLIENT_KEYSTORE"), null));
        String authorizer = System.getenv("SAMSA_AUTHORIZER");
        if (authorizer == null || authorizer.isEmpty()) {
            // Without an authorizer nothing a client sees depends on its
            // principal: the check is left out rather than faked.
            System.out.println("mtls-principal: not run, the broker has no authorizer (SAMSA_AUTHORIZER is empty)");
        } else {
            features.put("mtls-principal", Security::principal);
        }
        for (boolean overTLS : new boolean[] {false, true}) {
            for (String m : new String[] {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"}) {
                String name = (overTLS ? "sasl-ssl-" : "sasl-") + m.toLowerCase();
                features.put(name, () -> roundTrip(name, saslAddr(overTLS), sasl(m, overTLS, user(m), password(m), null), null));
            }
        }
        features.put("auth-wrong-password", () -> refused(badPasswords(true)));
        features.put("auth-unknown-user", () -> refused(badPasswords(false)));
        features.put("auth-expired-token", () -> refused(Map.of("OAUTHBEARER", sasl("OAUTHBEARER", false,
                env("SAMSA_OAUTH_SUBJECT"), null, env("SAMSA_OAUTH_TOKEN_EXPIRED")))));
        features.put("auth-no-client-certificate", () -> refused(Map.of("TLS without a client certificate",
                withAddr(env("SAMSA_MTLS_BOOTSTRAP"), tls(null)))));
        Compat.runFeatures(features, only);
        System.exit(Compat.anyFailed ? 1 : 0);
    }

    static String env(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException(name + " is not set: the security part runs against lib.sh's start_secure_samsa");
        }
        return v;
    }

    static String saslAddr(boolean overTLS) {
        return env(overTLS ? "SAMSA_SASL_SSL_BOOTSTRAP" : "SAMSA_SASL_PLAINTEXT_BOOTSTRAP");
    }

    static String user(String mechanism) {
        switch (mechanism) {
            case "PLAIN": return env("SAMSA_PLAIN_USER");
            case "OAUTHBEARER": return env("SAMSA_OAUTH_SUBJECT");
            default: return env("SAMSA_SCRAM_USER");
        }
    }

    static String password(String mechanism) {
        switch (mechanism) {
            case "PLAIN": return env("SAMSA_PLAIN_PASSWORD");
            case "OAUTHBEARER": return null;
            default: return env("SAMSA_SCRAM_PASSWORD");
        }
    }

    /**
     * The SSL settings: the CA as a PEM trust store, and the PEM key store
     * the variable keystoreEnv names (null: no client certificate).
     */
    static Properties tls(String keystoreEnv) {
        Properties p = new Properties();
        p.put("security.protocol", "SSL");
        p.put("ssl.truststore.type", "PEM");
        p.put("ssl.truststore.location", env("SAMSA_CA_FILE"));
        if (keystoreEnv != null) {
            p.put("ssl.keystore.type", "PEM");
            p.put("ssl.keystore.location", env(keystoreEnv));
        }
        return p;
    }

    /**
     * The SASL settings for mechanism, over SASL_SSL when overTLS. For
     * OAUTHBEARER without a token, the Java client's own unsecured login
     * (OAuthBearerUnsecuredLoginCallbackHandler) makes the token for user;
     * with one, FixedToken hands it over as it is.
     */
    static Properties sasl(String mechanism, boolean overTLS, String user, String password, String token) {
        Properties p = overTLS ? tls(null) : new Properties();
        p.put("security.protocol", overTLS ? "SASL_SSL" : "SASL_PLAINTEXT");
        p.put("sasl.mechanism", mechanism);
        String jaas;
        switch (mechanism) {
            case "PLAIN":
                jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required";
                break;
            case "OAUTHBEARER":
                jaas = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required";
                break;
            default:
                jaas = "org.apache.kafka.common.security.scram.ScramLoginModule required";
        }
        if (password != null) {
            jaas += " username=" + quote(user) + " password=" + quote(password);
        } else if (token == null) {
            jaas += " unsecuredLoginStringClaim_sub=" + quote(user);
        } else {
            jaas += " token=" + quote(token);
            p.put("sasl.login.callback.handler.class", FixedToken.class.getName());
        }
        p.put("sasl.jaas.config", jaas + ";");
        return p;
    }

    static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** Each SASL mechanism with a password: a wrong one, or (wrong false) an unknown user. */
    static Map<String, Properties> badPasswords(boolean wrong) {
        Map<String, Properties> out = new LinkedHashMap<>();
        for (String m : new String[] {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}) {
            String u = wrong ? user(m) : env("SAMSA_UNKNOWN_USER");
            String pw = wrong ? env("SAMSA_WRONG_PASSWORD") : password(m);
            out.put(m, sasl(m, false, u, pw, null));
        }
        return out;
    }

    /** The bootstrap address rides along in the settings of a refused login. */
    static Properties withAddr(String addr, Properties p) {
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, addr);
        return p;
    }

    /** Points Compat's clients at addr with settings. */
    static void connect(String addr, Properties settings) {
        Compat.bootstrap = addr;
        Compat.security.clear();
        Compat.security.putAll(settings);
    }

    /**
     * Over addr with settings: creates a topic (unless given one), produces
     * 10 records, reads to the end offset and compares.
     */
    static void roundTrip(String feature, String addr, Properties settings, String topic) throws Exception {
        connect(addr, settings);
        if (topic == null) {
            topic = Compat.topicName(feature);
            try (Admin a = Compat.admin()) {
                Compat.createTopic(a, topic, 1, null);
            }
        }
        List<String> want = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = Compat.producer(ProducerConfig.ACKS_CONFIG, "all")) {
            for (int i = 0; i < 10; i++) {
                String v = feature + "-v" + i;
                p.send(new ProducerRecord<>(topic, 0, Compat.b("k" + i), Compat.b(v))).get(30, TimeUnit.SECONDS);
                want.add(v);
            }
        }
        Compat.inject(topic, 0, Compat.b("k9"), Compat.b(want.get(9)));
        List<ConsumerRecord<byte[], byte[]>> got = Compat.readAll(topic, 1, 30000);
        Compat.exactly(want, got, "records");
        for (int i = 0; i < got.size(); i++) {
            Compat.check(Compat.s(got.get(i).value()).equals(want.get(i)), "record %d: %s, want %s", i,
                    Compat.s(got.get(i).value()), want.get(i));
        }
    }

    /**
     * mtls-principal: start_secure_samsa's ACL lets only the client
     * certificate's principal use the topics named with its prefix; another
     * subject's certificate must be refused with TopicAuthorizationException
     * (tried until the ACL is in force), then the round trip with the
     * client's certificate must pass. Only where the broker has an
     * authorizer.
     */
    static void principal() throws Exception {
        String topic = env("SAMSA_PRINCIPAL_TOPIC_PREFIX") + Compat.topicName("mtls-principal");
        connect(env("SAMSA_BOOTSTRAP"), new Properties());
        try (Admin a = Compat.admin()) {
            Compat.createTopic(a, topic, 1, null);
        }
        connect(env("SAMSA_MTLS_BOOTSTRAP"), tls("SAMSA_OTHER_CLIENT_KEYSTORE"));
        Throwable denied = null;
        long deadline = System.currentTimeMillis() + 20000;
        while (denied == null) {
            Throwable err = null;
            try (KafkaProducer<byte[], byte[]> p = Compat.producer(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5000,
                    ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10000, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000)) {
                p.send(new ProducerRecord<>(topic, 0, Compat.b("k"), Compat.b("v"))).get(15, TimeUnit.SECONDS);
            } catch (Exception e) {
                err = e instanceof ExecutionException ? e.getCause() : e;
            }
            if (err instanceof TopicAuthorizationException) {
                denied = err;
                break;
            }
            Compat.check(System.currentTimeMillis() < deadline, "another subject's certificate wrote to %s, which only %s may: %s",
                    topic, env("SAMSA_CLIENT_PRINCIPAL"), err == null ? "no error" : Compat.describe(err));
            Thread.sleep(300); // the ACL is not in force yet
        }
        roundTrip("mtls-principal", env("SAMSA_MTLS_BOOTSTRAP"), tls("SAMSA_CLIENT_KEYSTORE"), topic);
        String d = Compat.describe(denied);
        throw new Compat.Passed(String.format("%s (subject %s) wrote and read a topic only it may; another subject: %s",
                env("SAMSA_CLIENT_PRINCIPAL"), env("SAMSA_CLIENT_SUBJECT"), d.length() > 120 ? d.substring(0, 120) : d));
    }

    /** Each login of logins (what: its settings) must fail with the client's authentication exception. */
    static void refused(Map<String, Properties> logins) throws Exception {
        List<String> seen = new ArrayList<>();
        for (Map.Entry<String, Properties> l : logins.entrySet()) {
            String what = l.getKey();
            Properties p = new Properties();
            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, env("SAMSA_SASL_PLAINTEXT_BOOTSTRAP"));
            p.putAll(l.getValue());
            p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 15000);
            p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) REFUSAL_DEADLINE_S * 1000);
            long start = System.nanoTime();
            Throwable err = null;
            try (Admin a = Admin.create(p)) {
                a.describeCluster().clusterId().get(REFUSAL_DEADLINE_S, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                err = e.getCause();
            } catch (TimeoutException e) {
                err = e;
            }
            double took = (System.nanoTime() - start) / 1e9;
            Compat.check(err != null, "%s: the login succeeded, want it refused", what);
            boolean sasl = l.getValue().containsKey("sasl.mechanism");
            Class<?> want = sasl ? SaslAuthenticationException.class : SslAuthenticationException.class;
            Compat.check(want.isInstance(err), "%s: want %s, got after %.1fs: %s", what, want.getSimpleName(), took,
                    Compat.describe(err));
            String msg = Compat.describe(err);
            seen.add(String.format("%s: %s (%.1fs)", what, msg.length() > 160 ? msg.substring(0, 160) : msg, took));
        }
        throw new Compat.Passed(String.join("; ", seen));
    }

    /**
     * Hands the OAUTHBEARER token of the JAAS option "token" over as it is.
     * Its lifetime is given as an hour from now whatever the token's exp
     * says: the Java client's refresh would act on an expired one before
     * sending it; the broker judges the token's own exp claim.
     */
    public static final class FixedToken implements AuthenticateCallbackHandler {
        private String token;
        private String principal;

        @Override
        public void configure(Map<String, ?> configs, String mechanism, List<AppConfigurationEntry> entries) {
            Map<String, ?> opts = entries.get(0).getOptions();
            token = (String) opts.get("token");
            principal = System.getenv().getOrDefault("SAMSA_OAUTH_SUBJECT", "compat-oauth");
        }

        @Override
        public void handle(Callback[] callbacks) throws UnsupportedCallbackException {
            for (Callback c : callbacks) {
                if (c instanceof OAuthBearerTokenCallback) {
                    long now = System.currentTimeMillis();
                    ((OAuthBearerTokenCallback) c).token(new OAuthBearerToken() {
                        @Override
                        public String value() {
                            return token;
                        }

                        @Override
                        public Set<String> scope() {
                            return Set.of();
                        }

                        @Override
                        public long lifetimeMs() {
                            return now + 3_600_000;
                        }

                        @Override
                        public String principalName() {
                            return principal;
                        }

                        @Override
                        public Long startTimeMs() {
                            return now;
                        }
                    });
                } else if (!(c instanceof SaslExtensionsCallback)) {
                    throw new UnsupportedCallbackException(c);
                }
            }
        }

        @Override
        public void close() {
        }
    }
}
