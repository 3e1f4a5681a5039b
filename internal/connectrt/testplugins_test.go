package connectrt

import (
	"context"
	"fmt"
	"strings"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectors/file"
)

// The runtime's own tests use the FileStream connectors and the simplest
// converter (strings as UTF-8 bytes), so what they check is the runtime:
// offsets, statuses, target states, rebalances. The real converters and
// transforms are wired by cmd/samsa and tested end to end there.
func testPlugins() *Plugins {
	return &Plugins{
		Connectors: append(file.Plugins(), connect.Plugin{Class: "test.PanickingSource", Type: connect.PluginSource, Version: "test",
			New: func() connect.Connector { return panickingSource{} }}),
		NewConverter: func(class string) (connect.Converter, error) {
			switch class {
			case "bad.Converter":
				return nil, fmt.Errorf("no converter %s", class)
			case "picky.Converter":
				return pickyConverter{}, nil
			}
			return stringConverter{}, nil
		},
		NewHeaderConverter: func(class string) (connect.HeaderConverter, error) { return stringHeaders{}, nil },
		NewChain:           func(map[string]string) (Chain, error) { return noChain{}, nil },
	}
}

type stringConverter struct{}

func (stringConverter) Configure(map[string]string, bool) error { return nil }
func (stringConverter) FromConnectData(_ string, _ connect.Headers, _ *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return []byte(fmt.Sprint(v)), nil
}
func (stringConverter) ToConnectData(_ string, _ connect.Headers, b []byte) (*connect.Schema, any, error) {
	if b == nil {
		return connect.OptionalString, nil, nil
	}
	return connect.OptionalString, string(b), nil
}

type stringHeaders struct{}

func (stringHeaders) Configure(map[string]string) error { return nil }
func (stringHeaders) FromConnectHeader(topic, _ string, sc *connect.Schema, v any) ([]byte, error) {
	return stringConverter{}.FromConnectData(topic, nil, sc, v)
}
func (stringHeaders) ToConnectHeader(topic, _ string, b []byte) (*connect.Schema, any, error) {
	return stringConverter{}.ToConnectData(topic, nil, b)
}

type noChain struct{}

func (noChain) Apply(r connect.Record) (connect.Record, bool, error) { return r, true, nil }
func (noChain) Close() error                                         { return nil }

// pickyConverter refuses values that contain "bad", for the error handling
// tests.
type pickyConverter struct{ stringConverter }

func (pickyConverter) ToConnectData(topic string, h connect.Headers, b []byte) (*connect.Schema, any, error) {
	if strings.Contains(string(b), "bad") {
		return nil, nil, fmt.Errorf("%w: %q is bad", connect.ErrData, b)
	}
	return stringConverter{}.ToConnectData(topic, h, b)
}

// panickingSource's task panics in its first Poll: a plugin's bug.
type panickingSource struct{}

func (panickingSource) Version() string            { return "test" }
func (panickingSource) Config() *connect.ConfigDef { return connect.NewConfigDef() }
func (panickingSource) Start(connect.ConnectorContext, map[string]string) error {
	return nil
}
func (panickingSource) TaskConfigs(int) ([]map[string]string, error) {
	return []map[string]string{{}}, nil
}
func (panickingSource) Stop() error                 { return nil }
func (panickingSource) NewTask() connect.SourceTask { return panickingTask{} }

type panickingTask struct{}

func (panickingTask) Start(connect.SourceTaskContext, map[string]string) error { return nil }
func (panickingTask) Poll(context.Context) ([]connect.SourceRecord, error) {
	panic("boom")
}
func (panickingTask) Stop() error { return nil }
