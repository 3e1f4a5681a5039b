// Command connect-example is a Kafka Connect worker with the guide's two
// example connectors beside Samsa's built-in ones (docs/CONNECT-SDK.md):
//
//	go build -o connect-example ./connect/example/connect-example
//	./connect-example worker.properties                  # distributed
//	./connect-example --standalone worker.properties counter.properties
package main

import (
	"github.com/samsa-io/samsa/connect/example/counter"
	"github.com/samsa-io/samsa/connect/example/linesink"
	"github.com/samsa-io/samsa/connect/worker"
)

func main() {
	worker.Main(counter.Plugin(), linesink.Plugin())
}
