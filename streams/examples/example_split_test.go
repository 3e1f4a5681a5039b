package examples_test

import (
	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/examples"
	"github.com/samsa-io/samsa/streams/serde"
)

// Each payment goes to the first branch that takes it: 100000 cents is
// large (the first predicate holds), -100 is invalid, the rest normal.
func ExampleRoutePayments() {
	d := driver(examples.RoutePayments())
	defer d.Close()
	payments := streams.NewInputTopic(d, "payments", serde.String(), serde.Int64())
	pipe(payments,
		rec("pay1", int64(500), 1),
		rec("pay2", int64(250_000), 2),
		rec("pay3", int64(-100), 3),
		rec("pay4", int64(100_000), 4),
	)
	for _, topic := range []string{"payments-large", "payments-invalid", "payments-normal"} {
		printTopic(d, topic, serde.String(), serde.Int64())
	}
	// Output:
	// payments-large: pay2 = 250000 @2
	// payments-large: pay4 = 100000 @4
	// payments-invalid: pay3 = -100 @3
	// payments-normal: pay1 = 500 @1
}
