// Package httpauth secures the HTTP listeners of Samsa's client-side
// services (the Schema Registry, the REST Proxy): TLS from key and trust
// stores with Confluent's ssl.client.authentication (ListenerTLS), and
// HTTP basic authentication with the meaning of Confluent's
// authentication.method=BASIC, against a users file in Jetty's
// PropertyFileLoginModule format or the Kafka cluster's SASL principals
// (Auth, LoadUsers, KafkaLogin). Each service writes its own error bodies:
// Check answers typed errors (ErrUnauthorized, ErrForbidden) and the
// service maps them. Unrouted tells a request no route takes (404 or 405)
// so that each service answers it in its own error body too.
package httpauth
