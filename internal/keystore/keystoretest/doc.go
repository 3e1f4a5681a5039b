// Package keystoretest makes the stores Kafka users have (JKS and PKCS12
// key and trust stores as keytool writes them, PEM keys encrypted as
// openssl pkcs8 -topk8 -v2 aes256 encrypts them) for the tests of the
// packages that read them: internal/keystore itself, the broker's listeners
// (internal/auth) and the client commands (internal/cli). It is imported
// by tests only.
//
// It writes with the store libraries and its own PBES2 encoder, not with
// internal/keystore, so that a reader's bug is not mirrored by the writer.
package keystoretest
