package examples

import (
	"fmt"
	"time"

	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/serde"
)

// ImpressionsWithClicks joins ad impressions with the clicks on them
// (both keyed by ad ID) when the click comes within 10 s of the
// impression, either way round: a stream-stream inner join. Each side is
// kept in a window store for the join window, so a record joins every
// record of the other side within it, whichever arrives first; the result
// carries the later of the two timestamps.
func ImpressionsWithClicks() (*streams.Topology, error) {
	b := streams.NewBuilder()
	impressions := streams.From[string, string](b, []string{"impressions"})
	clicks := streams.From[string, string](b, []string{"ad-clicks"})
	joined := streams.StreamStreamJoin(impressions, clicks,
		func(ad, impression, click string) string { return impression + " -> " + click },
		streams.JoinWindowsOfTimeDifferenceWithNoGrace(10*time.Second))
	joined.To("impressions-clicked")
	return b.Build()
}

// EnrichPurchases adds each user's region to their purchases: a stream
// (purchases, keyed by user) joined with a table (users: user -> region).
// A left join, so a purchase of a user the table does not know goes out
// with "unknown"; updates of the table emit nothing, they only change what
// later purchases see.
func EnrichPurchases() (*streams.Topology, error) {
	b := streams.NewBuilder()
	purchases := streams.From[string, string](b, []string{"purchases"})
	users := streams.TableFrom(b, "users", streams.Consumed[string, string]{})
	enriched := streams.StreamTableLeftJoin(purchases, users, func(user, item string, region *string) string {
		if region == nil {
			return item + " (region unknown)"
		}
		return item + " (" + *region + ")"
	})
	enriched.To("purchases-enriched")
	return b.Build()
}

// Order is an order row: which product, how many. It travels as JSON
// (serde.JSON[Order]()).
type Order struct {
	Product  string `json:"product"`
	Quantity int    `json:"quantity"`
}

// OrdersWithProductNames joins the orders table (order ID -> Order) with
// the products table (product ID -> name) on the order's product: a
// foreign-key table join (KIP-213). The result is a table keyed by order
// ID that changes when the order changes (a new product, a new quantity)
// and when its product's row changes; a deleted order deletes its row.
func OrdersWithProductNames() (*streams.Topology, error) {
	b := streams.NewBuilder()
	orders := streams.TableFrom(b, "orders", streams.Consumed[string, Order]{Value: serde.JSON[Order]()})
	products := streams.TableFrom(b, "products", streams.Consumed[string, string]{})
	joined := streams.ForeignKeyJoin(orders, products,
		func(_ string, o Order) (string, bool) { return o.Product, true },
		func(_ string, o Order, name string) string { return fmt.Sprintf("%d x %s", o.Quantity, name) })
	joined.ToStream().To("orders-named")
	return b.Build()
}

// OrdersWithGlobalProducts looks the product of each order event up in a
// global table: every instance holds all of "products", so the stream
// (keyed by order ID) needs no repartition, and the key mapper picks the
// product ID out of the value. An inner join: an order of an unknown
// product is dropped.
func OrdersWithGlobalProducts() (*streams.Topology, error) {
	b := streams.NewBuilder()
	orders := streams.From(b, []string{"order-events"}, streams.Consumed[string, Order]{Value: serde.JSON[Order]()})
	products := streams.GlobalTableFrom(b, "products", streams.Consumed[string, string]{})
	joined := streams.StreamGlobalTableJoin(orders, products,
		func(_ string, o Order) (string, bool) { return o.Product, true },
		func(_ string, o Order, name string) string { return fmt.Sprintf("%d x %s", o.Quantity, name) })
	joined.To("order-events-named")
	return b.Build()
}
