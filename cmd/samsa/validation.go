package main

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/samsa-io/samsa/internal/broker"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/schemaregistry"
)

// How long the broker's validation trusts the registry's answers
// (docs/DESIGN-schemaregistry.md "Broker-side validation"): a registered
// ID for remotePositiveTTL (a deleted subject stops validating within
// it), an unknown one for negativeTTL, so that a producer of bad records
// costs one lookup a second and a schema registered meanwhile is found
// soon. The registry in process is asked each time: its answer is a map
// lookup.
const (
	remotePositiveTTL = 5 * time.Minute
	negativeTTL       = time.Second
)

// schemaIDsFor is what the broker checks schema IDs against: the registry
// serve runs (samsa.schema.registry.listener), set into the returned
// inProcessIDs once it has started, or the one at
// confluent.schema.registry.url over HTTP; nil for none. Both set
// explicitly is refused: the broker would ask one and the operator might
// mean the other. A URL beside the listener's default is the one asked.
func schemaIDsFor(values config.Values) (broker.SchemaIDs, *inProcessIDs, error) {
	urls := values.List("confluent.schema.registry.url")
	inProcess := values.String("samsa.schema.registry.listener") != ""
	_, listenerGiven := values.Given(config.SourceStaticBroker)["samsa.schema.registry.listener"]
	if inProcess && len(urls) > 0 && !listenerGiven {
		// The registry runs on its default port, but the operator named
		// another one for validation: that one is asked.
		inProcess = false
	}
	switch {
	case inProcess && len(urls) > 0:
		return nil, nil, errors.New("confluent.schema.registry.url and samsa.schema.registry.listener are both set: schema ID validation asks the registry serve runs when there is one, so set only samsa.schema.registry.listener, or only the URL of another registry")
	case inProcess:
		p := &inProcessIDs{}
		return schemaregistry.NewCached(p, 0, negativeTTL), p, nil
	case len(urls) > 0:
		remote, err := schemaregistry.NewRemote(urls)
		if err != nil {
			return nil, nil, err
		}
		return schemaregistry.NewCached(remote, remotePositiveTTL, negativeTTL), nil, nil
	}
	return nil, nil, nil
}

// inProcessIDs answers from the registry serve runs, which starts after
// the broker serves: until then every lookup is an error, which the
// broker answers with a retriable code.
type inProcessIDs struct {
	reg atomic.Pointer[schemaregistry.Registry]
}

var errRegistryStarting = errors.New("the schema registry inside samsa serve has not started yet")

func (p *inProcessIDs) Registered(ctx context.Context, subject string, id int32) (bool, error) {
	r := p.reg.Load()
	if r == nil {
		return false, errRegistryStarting
	}
	return r.Registered(ctx, subject, id)
}

func (p *inProcessIDs) SchemaType(ctx context.Context, id int32) (string, bool, error) {
	r := p.reg.Load()
	if r == nil {
		return "", false, errRegistryStarting
	}
	return r.SchemaType(ctx, id)
}

func (p *inProcessIDs) RecordName(ctx context.Context, id int32, indexes []int) (string, string, error) {
	r := p.reg.Load()
	if r == nil {
		return "", "", errRegistryStarting
	}
	return r.RecordName(ctx, id, indexes)
}
