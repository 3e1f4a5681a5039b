// Package console is Samsa's web console: a browser's view of a Kafka
// cluster and its ecosystem (brokers, topics, messages, groups, the
// Schema Registry, Connect, ACLs, SCRAM users, quotas, reassignments and
// the balancer), and the forms to operate them. It is a Kafka client only
// (franz-go's kgo and kadm, the registry's and Connect's REST APIs, and
// a Samsa broker's HTTP admin listener where there is one), so it runs
// against Apache Kafka as well as Samsa: samsa serve starts one on
// samsa.console.listener, samsa console against any cluster.
//
// Pages are rendered on the server with html/template (templates/), one
// Go file and one template per page; htmx (vendored in static/, embedded)
// turns links and forms into partial swaps and keeps the overview live
// over server-sent events, but every page reads without JavaScript.
// Charts are SVG drawn on the server (svg.go). When users log in
// (Config.LoginMechanism) each session holds clients logged in as its
// user, so the cluster's ACLs apply to what they see and do; every
// mutating request carries the session's CSRF token. See
// docs/DESIGN-console.md.
package console
