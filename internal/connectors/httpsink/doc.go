// Package httpsink is an HTTP sink with the class name and configs of
// Confluent's HTTP Sink connector: each task buffers the records Put gives
// it, sends them in batches (batch.max.size, with a prefix, suffix and
// separator, or as a JSON array) to http.api.url with the configured
// method, headers and basic authentication, retries the status codes and
// network failures it is told to with backoff, and on a failure that
// remains fails the task, or logs it and reports the batch's records to the
// runtime's errant record reporter (the dead letter queue), or ignores it,
// as behavior.on.error says. docs/connect/connectors-basic.md says what
// differs from Confluent's and why.
package httpsink
