// Package quota measures what clients use and says how long to throttle
// them, as Apache Kafka's client quotas do (issue 14, docs/DESIGN-quotas.md).
//
// A Manager enforces one kind of client quota (producer_byte_rate,
// consumer_byte_rate, request_percentage, controller_mutation_rate) for
// every client: it resolves which quota entity applies to a user and a
// client ID with Kafka's eight levels of precedence, records usage in a
// sensor shared by every client that entity covers, and, when the measured
// rate is over the quota, returns the throttle time that brings it back, by
// Kafka's formula; a producer is also held to two windows' worth of its
// quota in any one window (burstWindows says why). Rates are measured over
// quota.window.num windows of quota.window.size.seconds as Kafka's sampled
// Rate does (rate.go); the controller mutation quota is a token bucket as
// Kafka's (bucket.go); a Limiter is one rate with a limit, for the
// connection creation rates (limiter.go). Replication is one side of the
// replication throttle (issue 15), Kafka's ReplicationQuotaManager: a
// broker-wide byte rate measured as Kafka's SimpleRate, the allowance a
// follower fetch may take of it, and which partitions a topic's
// throttled-replica lists name for a broker (replication.go, throttled.go).
//
// The package holds no network or broker state: the broker records what a
// request used, puts the throttle time in the response and mutes the
// connection for it (KIP-219). It imports nothing of Samsa's: the broker
// hands it the quotas of the metadata image, converted, when they change.
package quota
