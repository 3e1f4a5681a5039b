package builtin

import (
	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectors/datagen"
	"github.com/samsa-io/samsa/internal/connectors/file"
	"github.com/samsa-io/samsa/internal/connectors/httpsink"
	"github.com/samsa-io/samsa/internal/connectors/jdbc"
	"github.com/samsa-io/samsa/internal/connectors/mirror"
	"github.com/samsa-io/samsa/internal/connectors/pgcdc"
	"github.com/samsa-io/samsa/internal/connectors/s3sink"
	"github.com/samsa-io/samsa/internal/connectrt"
	"github.com/samsa-io/samsa/internal/connectrt/api"
	"github.com/samsa-io/samsa/internal/connectrt/convert"
	"github.com/samsa-io/samsa/internal/connectrt/transforms"
)

// Connectors are the connectors in the box.
func Connectors() []connect.Plugin {
	var out []connect.Plugin
	for _, ps := range [][]connect.Plugin{file.Plugins(), datagen.Plugins(), httpsink.Plugins(), s3sink.Plugins(), jdbc.Plugins(), pgcdc.Plugins(), mirror.Plugins()} {
		out = append(out, ps...)
	}
	return out
}

// Plugins are the built-in connectors plus extra ones (a user's own), the
// converters and the transforms.
func Plugins(extra ...connect.Plugin) *connectrt.Plugins {
	p := &connectrt.Plugins{
		Connectors:         append(Connectors(), extra...),
		NewConverter:       convert.New,
		NewHeaderConverter: convert.NewHeader,
		NewChain: func(props map[string]string) (connectrt.Chain, error) {
			c, err := transforms.NewChain(props)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
		ChainConfig: transforms.EnrichConfigDef,
	}
	for _, c := range convert.Plugins() {
		p.Others = append(p.Others, api.PluginInfo{Class: c.Class, Type: string(c.Type), Version: c.Version})
	}
	for _, t := range transforms.TransformPlugins() {
		p.Others = append(p.Others, api.PluginInfo{Class: t.Class, Type: string(connect.PluginTransformation), Version: t.Version})
	}
	for _, t := range transforms.PredicatePlugins() {
		p.Others = append(p.Others, api.PluginInfo{Class: t.Class, Type: string(connect.PluginPredicate), Version: t.Version})
	}
	return p
}
