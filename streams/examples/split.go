package examples

import (
	"github.com/samsa-io/samsa/streams"
)

// RoutePayments splits payments (key: payment ID, value: amount in cents)
// by size: each record goes to the first branch whose predicate holds,
// the rest to the default branch, and each branch to a topic of its own.
func RoutePayments() (*streams.Topology, error) {
	b := streams.NewBuilder()
	payments := streams.From[string, int64](b, []string{"payments"})
	split := payments.Split(streams.Named("route"))
	split.Branch(func(_ string, cents int64) bool { return cents >= 100_000 }, "large").To("payments-large")
	split.Branch(func(_ string, cents int64) bool { return cents <= 0 }, "invalid").To("payments-invalid")
	split.Default("normal").To("payments-normal")
	return b.Build()
}
