// Package builtin is what Samsa's Connect workers can run out of the box:
// the connectors of internal/connectors, the converters of
// internal/connectrt/convert and the transforms and predicates of
// internal/connectrt/transforms, gathered as connectrt.Plugins; and the
// distributed worker's group membership (internal/connectrt/member) behind
// connectrt's Membership interface. samsa connect, samsa serve and the public
// connect/worker package (users' own connectors beside these) start workers
// with it.
package builtin
