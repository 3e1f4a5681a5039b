// Package worker runs a Kafka Connect worker with your own connectors beside
// Samsa's built-in ones, without forking Samsa: a main package that calls
// Main with its plugins is a binary that behaves exactly as `samsa connect`
// (the same worker properties, --standalone with connector property files,
// Kafka Connect's REST API), and also knows the plugins given.
//
//	func main() { worker.Main(counter.Plugin(), linesink.Plugin()) }
//
// Command is the same command line as a cobra command, to embed in a larger
// program. docs/CONNECT-SDK.md is the guide.
package worker
