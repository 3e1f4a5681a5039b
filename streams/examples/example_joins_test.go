package examples_test

import (
	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/examples"
	"github.com/samsa-io/samsa/streams/serde"
)

// A click joins the impression of its ad within 10 s either way: ad2's
// click comes before its impression and still joins. ad3's click comes
// 20 s after the impression, outside the window: no result.
func ExampleImpressionsWithClicks() {
	d := driver(examples.ImpressionsWithClicks())
	defer d.Close()
	impressions := streams.NewInputTopic(d, "impressions", serde.String(), serde.String())
	clicks := streams.NewInputTopic(d, "ad-clicks", serde.String(), serde.String())
	pipe(impressions, rec("ad1", "imp-1", 0))
	pipe(clicks, rec("ad1", "click-1", 5000))
	pipe(clicks, rec("ad2", "click-2", 6000))
	pipe(impressions, rec("ad2", "imp-2", 9000))
	pipe(impressions, rec("ad3", "imp-3", 10000))
	pipe(clicks, rec("ad3", "click-3", 30000))
	printTopic(d, "impressions-clicked", serde.String(), serde.String())
	// Output:
	// impressions-clicked: ad1 = imp-1 -> click-1 @5000
	// impressions-clicked: ad2 = imp-2 -> click-2 @9000
}

// Each purchase is joined with the user's row as it is when the purchase
// is processed: alice's move to asia changes her later purchases only,
// and emits nothing itself.
func ExampleEnrichPurchases() {
	d := driver(examples.EnrichPurchases())
	defer d.Close()
	users := streams.NewInputTopic(d, "users", serde.String(), serde.String())
	purchases := streams.NewInputTopic(d, "purchases", serde.String(), serde.String())
	pipe(users, rec("alice", "europe", 0))
	pipe(purchases, rec("alice", "book", 1000))
	pipe(purchases, rec("bob", "pen", 2000))
	pipe(users, rec("alice", "asia", 3000))
	pipe(purchases, rec("alice", "lamp", 4000))
	printTopic(d, "purchases-enriched", serde.String(), serde.String())
	// Output:
	// purchases-enriched: alice = book (europe) @1000
	// purchases-enriched: bob = pen (region unknown) @2000
	// purchases-enriched: alice = lamp (asia) @4000
}

// The joined table follows both sides: a renamed product updates every
// order of it (stamped with the product's update), an order waits for its
// product to exist (an inner join), an order moved to another product
// joins that one, and a deleted order is deleted downstream.
func ExampleOrdersWithProductNames() {
	d := driver(examples.OrdersWithProductNames())
	defer d.Close()
	products := streams.NewInputTopic(d, "products", serde.String(), serde.String())
	orders := streams.NewInputTopic(d, "orders", serde.String(), serde.JSON[examples.Order]())
	pipe(products, rec("p1", "widget", 0))
	pipe(orders, rec("o1", examples.Order{Product: "p1", Quantity: 2}, 10))
	pipe(products, rec("p1", "super widget", 20))
	pipe(orders, rec("o2", examples.Order{Product: "p2", Quantity: 1}, 30))
	pipe(products, rec("p2", "gadget", 40))
	pipe(orders, rec("o1", examples.Order{Product: "p2", Quantity: 3}, 50))
	pipe(orders, streams.Record[string, examples.Order]{Key: "o2", NullValue: true, Timestamp: 60})
	printTopic(d, "orders-named", serde.String(), serde.String())
	// Output:
	// orders-named: o1 = 2 x widget @10
	// orders-named: o1 = 2 x super widget @20
	// orders-named: o2 = 1 x gadget @40
	// orders-named: o1 = 3 x gadget @50
	// orders-named: o2 = null @60
}

// A global table is read whole by every instance; the order events need
// no repartition to join it. e2's product is unknown when it arrives, so
// the inner join drops it; e3 comes after the product was added.
func ExampleOrdersWithGlobalProducts() {
	d := driver(examples.OrdersWithGlobalProducts())
	defer d.Close()
	products := streams.NewInputTopic(d, "products", serde.String(), serde.String())
	events := streams.NewInputTopic(d, "order-events", serde.String(), serde.JSON[examples.Order]())
	pipe(products, rec("p1", "widget", 0), rec("p2", "gadget", 0))
	pipe(events, rec("e1", examples.Order{Product: "p1", Quantity: 2}, 10))
	pipe(events, rec("e2", examples.Order{Product: "p3", Quantity: 1}, 20))
	pipe(products, rec("p3", "gizmo", 30))
	pipe(events, rec("e3", examples.Order{Product: "p3", Quantity: 5}, 40))
	printTopic(d, "order-events-named", serde.String(), serde.String())
	// Output:
	// order-events-named: e1 = 2 x widget @10
	// order-events-named: e3 = 5 x gizmo @40
}
