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
	if s := v.String("controller.listener.names"); s != "" {
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

// checkQuorum refuses a controller quorum that is not this node: the one voter or
// bootstrap server Accepts lets through must be this node (node.id) on one of its own
// listener ports, or Samsa would run a quorum of itself while the operator meant another.
func checkQuorum(v Values) error {
	ports := map[string]bool{}
	for _, l := range strings.Split(v.String("listeners"), ",") {
		if i := strings.LastIndexByte(l, ':'); i >= 0 {
			ports[strings.TrimSpace(l[i+1:])] = true
		}
	}
	refuse := func(name, value, why string) error {
		return notSupported(name, "value "+value+" is not supported yet ("+byQuorum+"): "+why)
	}
	for _, name := range []string{"controller.quorum.voters", "controller.quorum.bootstrap.servers"} {
		for _, item := range v.List(name) {
			addr := item
			if name == "controller.quorum.voters" {
				id, rest, ok := strings.Cut(item, "@")
				if !ok || id != formatValue(v.Int("node.id")) {
					return refuse(name, item, "the only voter must be this node, node.id "+formatValue(v.Int("node.id"))+", as id@host:port")
				}
				addr = rest
			}
			i := strings.LastIndexByte(addr, ':')
			if i < 0 || !ports[addr[i+1:]] {
				return refuse(name, item, "the controller must be this node, on the port of one of its listeners")
			}
		}
	}
	return nil
}
