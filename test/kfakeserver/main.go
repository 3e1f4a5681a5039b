// Command kfakeserver runs franz-go's in-memory Kafka fake (kfake) on a
// loopback port, so `samsa bench` can measure it as a separate process,
// side by side with a Samsa broker (test/compare-kfake.sh). It is a test
// tool: nothing in the samsa binary depends on kfake.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 0, "port to listen on (0: any free port)")
	flag.Parse()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(*port), kfake.AllowAutoTopicCreation())
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfakeserver:", err)
		os.Exit(1)
	}
	defer c.Close()
	fmt.Println("listening", c.ListenAddrs()[0])
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
}
