// Package examples holds the runnable examples of docs/STREAMS.md: each
// topology is built by an exported function (copy it into your program),
// and each Example test runs it through streams.TestDriver, without a
// broker, and checks its output. wordcount-app runs word count against a
// real cluster.
package examples
