package devcluster

import (
	"errors"
	"fmt"
	"net"

	"github.com/samsa-io/samsa/internal/freeport"
)

// ControllerPortOffset separates the controller listeners from the Kafka
// listeners when ports count up from a base: node i (from 1) listens for
// clients on base+i-1 and for the quorum on base+ControllerPortOffset+i-1,
// so 19092-19094 and 19192-19194 for three nodes from 19092.
const ControllerPortOffset = 100

// HTTPPortOffset puts the HTTP listeners (samsa.http.listener: /metrics,
// /healthz, /readyz) above the controller listeners when ports count up
// from a base: 19292-19294 for three nodes from 19092.
const HTTPPortOffset = 2 * ControllerPortOffset

// RegistryPortOffset puts the Schema Registry listeners
// (samsa.schema.registry.listener) above the HTTP listeners: 19392-19394
// for three nodes from 19092.
const RegistryPortOffset = 3 * ControllerPortOffset

// RestPortOffset puts the REST Proxy listeners (samsa.rest.listener)
// above the registry listeners: 19492-19494 for three nodes from 19092.
const RestPortOffset = 4 * ControllerPortOffset

// ConnectPortOffset puts the Connect workers' listeners
// (samsa.connect.listener, with Config.Connect) above the REST Proxy
// listeners: 19592-19594 for three nodes from 19092.
const ConnectPortOffset = 5 * ControllerPortOffset

// ports are the nodes' ports, by listener, node i's at index i-1. connect
// is empty unless the cluster runs Connect.
type ports struct {
	kafka, controller, http, registry, rest, connect []int
}

// ErrPortInUse marks a start that failed because a port was taken: by
// someone else when the ports were checked, or, for ports picked free, in
// the moment between picking and binding. A caller may start again on
// other ports.
var ErrPortInUse = errors.New("port in use")

// portsFrom lays out the Kafka, controller, HTTP, registry, REST (and Connect) ports of n nodes from
// base and checks that each is free now, naming the first that is not.
func portsFrom(base, n int, connect bool) (ports, error) {
	if n > ControllerPortOffset {
		return ports{}, fmt.Errorf("%d nodes do not fit between the Kafka and controller ports (%d apart)", n, ControllerPortOffset)
	}
	top := RestPortOffset
	if connect {
		top = ConnectPortOffset
	}
	if base < 1 || base+top+n-1 > 65535 {
		return ports{}, fmt.Errorf("base port %d: the ports of %d nodes run past 1-65535", base, n)
	}
	var p ports
	for i := range n {
		p.kafka = append(p.kafka, base+i)
		p.controller = append(p.controller, base+ControllerPortOffset+i)
		p.http = append(p.http, base+HTTPPortOffset+i)
		p.registry = append(p.registry, base+RegistryPortOffset+i)
		p.rest = append(p.rest, base+RestPortOffset+i)
		if connect {
			p.connect = append(p.connect, base+ConnectPortOffset+i)
		}
	}
	return p, p.checkFree()
}

// checkFree checks that every port is free now, naming the first that is
// not.
func (p ports) checkFree() error {
	for i := range p.kafka {
		if err := checkFree(p.kafka[i], fmt.Sprintf("node %d's Kafka listener", i+1)); err != nil {
			return err
		}
		if err := checkFree(p.controller[i], fmt.Sprintf("node %d's controller listener", i+1)); err != nil {
			return err
		}
		if err := checkFree(p.http[i], fmt.Sprintf("node %d's HTTP listener", i+1)); err != nil {
			return err
		}
		if err := checkFree(p.registry[i], fmt.Sprintf("node %d's Schema Registry listener", i+1)); err != nil {
			return err
		}
		if err := checkFree(p.rest[i], fmt.Sprintf("node %d's REST Proxy listener", i+1)); err != nil {
			return err
		}
		if i < len(p.connect) {
			if err := checkFree(p.connect[i], fmt.Sprintf("node %d's Connect listener", i+1)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFree binds the port on loopback and lets it go again.
func checkFree(port int, what string) error {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("devcluster: 127.0.0.1:%d (%s): %w: %v", port, what, ErrPortInUse, err)
	}
	return ln.Close()
}

// freePorts picks n distinct free loopback ports outside the kernel's
// ephemeral range (internal/freeport). They are free again once returned,
// and another process may take one before a node binds it (ErrPortInUse).
func freePorts(n int) ([]int, error) {
	ports, err := freeport.Pick(n)
	if err != nil {
		return nil, fmt.Errorf("devcluster: pick free ports: %w", err)
	}
	return ports, nil
}
