package config

import (
	"slices"
	"strings"
)

// SecurityProtocol returns the security protocol listener.security.protocol.map gives a
// listener name. Names are compared upper-cased, as Kafka normalises them.
func (v Values) SecurityProtocol(listener string) (string, bool) {
	p, ok := protocolsOf(v.String("listener.security.protocol.map"))[strings.ToUpper(listener)]
	return p, ok
}

// protocolsOf parses a valid listener.security.protocol.map.
func protocolsOf(s string) map[string]string {
	m := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		if name, proto, ok := strings.Cut(strings.TrimSpace(pair), ":"); ok {
			m[strings.ToUpper(strings.TrimSpace(name))] = strings.TrimSpace(proto)
		}
	}
	return m
}

// listenerNames returns the upper-cased names of a valid listeners value, in order.
func listenerNames(s string) []string {
	var out []string
	for _, l := range strings.Split(s, ",") {
		if l = strings.TrimSpace(l); l != "" {
			name, _ := checkListener(l)
			out = append(out, name)
		}
	}
	return out
}

// checkListeners applies Kafka's rules across the listener configs: every listener has a
// security protocol; advertised listeners, the controller's and the inter-broker listener
// are among the listeners; inter.broker.listener.name and security.inter.broker.protocol
// are not both set.
func checkListeners(v Values) error {
	listeners := listenerNames(v.String("listeners"))
	protocols := protocolsOf(v.String("listener.security.protocol.map"))
	for _, l := range listeners {
		if _, ok := protocols[l]; !ok {
			return invalidValue(Broker.byName["listeners"], "listeners", v.String("listeners"),
				"listener with name "+l+" defined in listeners not found in listener.security.protocol.map")
		}
	}
	advertised := listeners
	if s := v.String("advertised.listeners"); s != "" {
		advertised = listenerNames(s)
		for _, l := range advertised {
			if !slices.Contains(listeners, l) {
				return invalidValue(Broker.byName["advertised.listeners"], "advertised.listeners", s,
					"advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. Found "+
						strings.Join(advertised, ",")+". The valid options based on the current configuration are "+strings.Join(listeners, ","))
			}
		}
	}
	if s := v.String("controller.listener.names"); s != "" && hasRole(v, "controller") {
		// A broker-only node names the controllers' listener to reach
		// them, without listening on it itself (broker.resolveQuorum).
		for _, l := range strings.Split(s, ",") {
			if !slices.Contains(listeners, strings.ToUpper(strings.TrimSpace(l))) {
				return invalidValue(Broker.byName["controller.listener.names"], "controller.listener.names", s,
					"controller.listener.names must only contain values appearing in the 'listeners' configuration")
			}
		}
	}
	if s := v.String("inter.broker.listener.name"); s != "" {
		if !slices.Contains(advertised, strings.ToUpper(s)) {
			return invalidValue(Broker.byName["inter.broker.listener.name"], "inter.broker.listener.name", s,
				"inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are "+strings.Join(advertised, ","))
		}
		if _, both := v.s.layers[SourceStaticBroker]["security.inter.broker.protocol"]; both {
			return invalidValue(Broker.byName["inter.broker.listener.name"], "inter.broker.listener.name", s,
				"only one of inter.broker.listener.name and security.inter.broker.protocol should be set")
		}
	}
	return nil
}

// hasRole reports whether process.roles gives the node a role; an empty
// process.roles is the single node, which has both.
func hasRole(v Values, role string) bool {
	roles := v.List("process.roles")
	return len(roles) == 0 || slices.Contains(roles, role)
}

// checkQuorum checks the quorum configs against this node. The static quorum
// (controller.quorum.voters) must name a node with the controller role, on the
// port of one of its own listeners; a broker-only node is not among it. A
// node may instead find the controllers through
// controller.quorum.bootstrap.servers alone, as Kafka 4 nodes do: a
// controller then bootstraps from the voters stored when it was formatted
// (broker.initialVotersOf checks them at start).
func checkQuorum(v Values) error {
	ports := map[string]bool{}
	for _, l := range strings.Split(v.String("listeners"), ",") {
		if i := strings.LastIndexByte(l, ':'); i >= 0 {
			ports[strings.TrimSpace(l[i+1:])] = true
		}
	}
	onOwnPort := func(addr string) bool {
		i := strings.LastIndexByte(addr, ':')
		return i >= 0 && ports[addr[i+1:]]
	}
	self := formatValue(v.Int("node.id"))
	if voters := v.List("controller.quorum.voters"); len(voters) > 0 {
		// Kafka finds the active controller through the bootstrap servers
		// when both are set; Samsa finds it among the voters, which is the
		// same only when every bootstrap server is a voter's address.
		addrs := map[string]bool{}
		for _, item := range voters {
			if _, addr, ok := strings.Cut(item, "@"); ok {
				addrs[addr] = true
			}
		}
		for _, item := range v.List("controller.quorum.bootstrap.servers") {
			if !addrs[item] {
				return invalidValue(Broker.byName["controller.quorum.bootstrap.servers"], "controller.quorum.bootstrap.servers", item,
					"with controller.quorum.voters set, each bootstrap server must be the address of a voter (the active controller is found among the voters)")
			}
		}
	}
	if voters := v.List("controller.quorum.voters"); len(voters) > 0 {
		found := false
		for _, item := range voters {
			id, addr, ok := strings.Cut(item, "@")
			if !ok || id == "" || !strings.Contains(addr, ":") {
				return invalidValue(Broker.byName["controller.quorum.voters"], "controller.quorum.voters", item, "each voter must be id@host:port")
			}
			if id == self {
				if !onOwnPort(addr) {
					return invalidValue(Broker.byName["controller.quorum.voters"], "controller.quorum.voters", item,
						"this node's voter entry must name the port of one of its listeners")
				}
				found = true
			}
		}
		if !found && hasRole(v, "controller") {
			return invalidValue(Broker.byName["controller.quorum.voters"], "controller.quorum.voters", strings.Join(voters, ","),
				"this node (node.id "+self+") has the controller role, so it must be one of the voters; a broker-only node has process.roles=broker")
		}
	}
	for _, item := range v.List("controller.quorum.bootstrap.servers") {
		if i := strings.LastIndexByte(item, ':'); i <= 0 || i == len(item)-1 || strings.Contains(item, "@") {
			return invalidValue(Broker.byName["controller.quorum.bootstrap.servers"], "controller.quorum.bootstrap.servers", item,
				"each bootstrap server must be host:port (a controller listener's address)")
		}
	}
	return nil
}
