package devcluster

import (
	"errors"
	"fmt"
	"net"
)

// ControllerPortOffset separates the controller listeners from the Kafka
// listeners when ports count up from a base: node i (from 1) listens for
// clients on base+i-1 and for the quorum on base+ControllerPortOffset+i-1,
// so 19092-19094 and 19192-19194 for three nodes from 19092.
const ControllerPortOffset = 100

// ErrPortInUse marks a start that failed because a port was taken: by
// someone else when the ports were checked, or, for ports picked free, in
// the moment between picking and binding. A caller may start again on
// other ports.
var ErrPortInUse = errors.New("port in use")

// portsFrom lays out the Kafka and controller ports of n nodes from base
// and checks that each is free now, naming the first that is not.
func portsFrom(base, n int) (kafka, controller []int, err error) {
	if n > ControllerPortOffset {
		return nil, nil, fmt.Errorf("%d nodes do not fit between the Kafka and controller ports (%d apart)", n, ControllerPortOffset)
	}
	if base < 1 || base+ControllerPortOffset+n-1 > 65535 {
		return nil, nil, fmt.Errorf("base port %d: the ports of %d nodes run past 1-65535", base, n)
	}
	for i := range n {
		kafka = append(kafka, base+i)
		controller = append(controller, base+ControllerPortOffset+i)
	}
	for i := range n {
		if err := checkFree(kafka[i], fmt.Sprintf("node %d's Kafka listener", i+1)); err != nil {
			return nil, nil, err
		}
		if err := checkFree(controller[i], fmt.Sprintf("node %d's controller listener", i+1)); err != nil {
			return nil, nil, err
		}
	}
	return kafka, controller, nil
}

// checkFree binds the port on loopback and lets it go again.
func checkFree(port int, what string) error {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("devcluster: 127.0.0.1:%d (%s): %w: %v", port, what, ErrPortInUse, err)
	}
	return ln.Close()
}

// freePorts asks the kernel for n distinct free loopback ports. All are
// held until all are chosen, so none repeats; they are free again once
// returned, and another process may take one before a node binds it
// (ErrPortInUse).
func freePorts(n int) ([]int, error) {
	var held []net.Listener
	defer func() {
		for _, ln := range held {
			ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("devcluster: pick a free port: %w", err)
		}
		held = append(held, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
