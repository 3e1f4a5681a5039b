// Package auth is who a connection is and what it may do: the TLS
// configurations of the secured listeners (PEM, PKCS12 and JKS stores, read
// by internal/keystore; client certificates, certificates reloaded from
// disk), the principal a
// certificate maps to (ssl.principal.mapping.rules), the server side of the
// SASL mechanisms (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER), and Kafka's
// StandardAuthorizer: ACLs, super users, DENY over ALLOW, and the
// operations each Kafka API needs.
//
// It holds no connections and no goroutines. The broker (L3) drives it: it
// wraps accepted connections in the TLS configuration of their listener,
// runs the SASL exchange of SaslHandshake and SaslAuthenticate through a
// Session, and asks the Authorizer before it acts. The credentials and
// ACLs it checks against live in the metadata log; the broker hands this
// package the current set from each metadata image.
package auth
