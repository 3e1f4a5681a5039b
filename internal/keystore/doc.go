// Package keystore reads the TLS key and trust stores of Kafka's ssl.*
// configs: PEM (with PKCS#8 keys encrypted by PBES2, as openssl and Java
// write them), PKCS12 and JKS. A JKS or PKCS12 file is read as what its
// content says it is, whichever of the two is configured, as Java does.
//
// It is a leaf so that the broker's listeners (internal/auth) and the
// client commands' --command-config (internal/cli) read the same files the
// same way, and a store that works with Kafka's tools works with both.
//
// It reads bytes: where they come from (a file, an inline config, a reload)
// is the caller's business. Errors name the password config a wrong
// password belongs to (ssl.keystore.password, ssl.key.password,
// ssl.truststore.password), since that is what the user has to fix, and
// never repeat a password.
package keystore
