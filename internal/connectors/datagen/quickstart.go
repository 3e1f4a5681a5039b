package datagen

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/connect"
)

// quickstart is one of Confluent's datagen schemas: its Connect schema (as
// Confluent's AvroData makes it from the Avro schema: a struct named
// namespace.name, required fields), the field used as key by default, and
// a generator of a value from the random source and the record's count
// (Confluent's "iteration" fields count from it).
type quickstart struct {
	name     string
	schema   *connect.Schema
	keyField string
	generate func(r *rand.Rand, count int64) *connect.Struct
}

// The time range Confluent's users and orders quickstarts draw from (Feb
// 2017 to Feb 2018), min inclusive, max exclusive.
const (
	timeMin = 1487715775521
	timeMax = 1519273364600
)

var usersSchema = connect.NewStruct("ksql.users").
	Field("registertime", connect.Int64Schema).
	Field("userid", connect.StringSchema).
	Field("regionid", connect.StringSchema).
	Field("gender", connect.StringSchema).
	MustBuild()

var pageviewsSchema = connect.NewStruct("ksql.pageviews").
	Field("viewtime", connect.Int64Schema).
	Field("userid", connect.StringSchema).
	Field("pageid", connect.StringSchema).
	MustBuild()

var addressSchema = connect.NewStruct("ksql.address").
	Field("city", connect.StringSchema).
	Field("state", connect.StringSchema).
	Field("zipcode", connect.Int64Schema).
	MustBuild()

var ordersSchema = connect.NewStruct("ksql.orders").
	Field("ordertime", connect.Int64Schema).
	Field("orderid", connect.Int32Schema).
	Field("itemid", connect.StringSchema).
	Field("orderunits", connect.Float64Schema).
	Field("address", addressSchema).
	MustBuild()

var quickstarts = map[string]quickstart{
	"users":     {name: "users", schema: usersSchema, keyField: "userid", generate: genUser},
	"pageviews": {name: "pageviews", schema: pageviewsSchema, keyField: "viewtime", generate: genPageview},
	"orders":    {name: "orders", schema: ordersSchema, keyField: "orderid", generate: genOrder},
}

// confluentOnly are Confluent's other quickstarts, named in the error that
// refuses them so that a user knows the name is right but not generated.
var confluentOnly = []string{
	"clickstream_codes", "clickstream", "clickstream_users", "ratings", "users_", "stock_trades",
	"inventory", "product", "purchases", "transactions", "stores", "credit_cards", "campaign_finance",
	"fleet_mgmt_description", "fleet_mgmt_location", "fleet_mgmt_sensors", "pizza_orders",
	"pizza_orders_completed", "pizza_orders_cancelled", "insurance_offers", "insurance_customers",
	"insurance_customer_activity", "gaming_games", "gaming_players", "gaming_player_activity",
	"payroll_employee", "payroll_employee_location", "payroll_bonus", "syslog_logs",
	"device_information", "siem_logs", "shoes", "shoe_customers", "shoe_orders", "shoe_clickstream",
}

// quickstartNames are the generated quickstarts, sorted.
func quickstartNames() []string { return []string{"orders", "pageviews", "users"} }

// genUser: registertime in the range, userid User_[1-9], regionid
// Region_[1-9], gender one of MALE, FEMALE, OTHER.
func genUser(r *rand.Rand, _ int64) *connect.Struct {
	return connect.NewStructValue(usersSchema).
		MustPut("registertime", between(r, timeMin, timeMax)).
		MustPut("userid", "User_"+digits19(r, 1)).
		MustPut("regionid", "Region_"+digits19(r, 1)).
		MustPut("gender", oneOf(r, "MALE", "FEMALE", "OTHER"))
}

// genPageview: viewtime counts 1, 11, 21... (Confluent's iteration start 1
// step 10), userid User_[1-9], pageid Page_[1-9][0-9].
func genPageview(r *rand.Rand, count int64) *connect.Struct {
	return connect.NewStructValue(pageviewsSchema).
		MustPut("viewtime", 1+10*count).
		MustPut("userid", "User_"+digits19(r, 1)).
		MustPut("pageid", "Page_"+digits19(r, 1)+strconv.Itoa(r.IntN(10)))
}

// genOrder: ordertime in the range, orderid counts from 0, itemid
// Item_[1-9][0-9]{0,2}, orderunits in [0.1, 10.0), and an address with
// city City_[1-9]{0,2}, state State_[1-9]{0,2}, zipcode in [10000, 99999).
func genOrder(r *rand.Rand, count int64) *connect.Struct {
	item := "Item_" + digits19(r, 1)
	for range r.IntN(3) {
		item += strconv.Itoa(r.IntN(10))
	}
	address := connect.NewStructValue(addressSchema).
		MustPut("city", "City_"+digits19(r, r.IntN(3))).
		MustPut("state", "State_"+digits19(r, r.IntN(3))).
		MustPut("zipcode", between(r, 10000, 99999))
	return connect.NewStructValue(ordersSchema).
		MustPut("ordertime", between(r, timeMin, timeMax)).
		MustPut("orderid", int32(count)).
		MustPut("itemid", item).
		MustPut("orderunits", 0.1+r.Float64()*(10.0-0.1)).
		MustPut("address", address)
}

// between is an int64 in [min, max).
func between(r *rand.Rand, min, max int64) int64 { return min + r.Int64N(max-min) }

// digits19 is n digits of [1-9].
func digits19(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(byte('1' + r.IntN(9)))
	}
	return b.String()
}

func oneOf(r *rand.Rand, options ...string) string { return options[r.IntN(len(options))] }
