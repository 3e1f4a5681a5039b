// Package api is the contract between the Connect runtime's REST layer
// (internal/connectrt/rest) and its herders (internal/connectrt): the Herder
// interface a worker answers REST calls through, the JSON entities of Kafka
// Connect's REST API with Kafka's field names, and the typed errors the REST
// layer turns into Kafka's {"error_code":N,"message":"..."} bodies.
package api
