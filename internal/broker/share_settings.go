package broker

import (
	"fmt"
	"strconv"
	"time"

	"github.com/samsa-io/samsa/internal/share"
)

// shareSettings are a share group's settings that the share-partitions
// and share fetches use: the group's configs over the broker's group.share.*
// defaults.
type shareSettings struct {
	lock          time.Duration
	deliveryLimit int16
	maxInFlight   int64
	autoReset     string
	readCommitted bool
}

func (s shareSettings) partitionConfig() share.Config {
	return share.Config{LockDuration: s.lock, DeliveryCountLimit: s.deliveryLimit, MaxInFlight: s.maxInFlight}
}

// shareSettings resolves a group's share settings.
// TODO(lead): group configs (b.groupConfig) once they land.
func (b *Broker) shareSettings(group string) shareSettings {
	return shareSettings{lock: 30 * time.Second, deliveryLimit: 5, maxInFlight: 2000, autoReset: "latest"}
}


// parseISODuration reads an ISO-8601 duration of days and time
// (PnDTnHnMnS, seconds possibly fractional), as Java's Duration.parse
// accepts them for share.auto.offset.reset's by_duration.
func parseISODuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not an ISO-8601 duration (PnDTnHnMnS)", s)
	if len(s) < 2 || (s[0] != 'P' && s[0] != 'p') {
		return 0, bad
	}
	var total time.Duration
	inTime, any := false, false
	num := ""
	for _, r := range s[1:] {
		switch {
		case r >= '0' && r <= '9' || r == '.':
			num += string(r)
			continue
		case r == 'T' || r == 't':
			if inTime || num != "" {
				return 0, bad
			}
			inTime = true
			continue
		}
		if num == "" {
			return 0, bad
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, bad
		}
		var unit time.Duration
		switch {
		case !inTime && (r == 'D' || r == 'd'):
			unit = 24 * time.Hour
		case inTime && (r == 'H' || r == 'h'):
			unit = time.Hour
		case inTime && (r == 'M' || r == 'm'):
			unit = time.Minute
		case inTime && (r == 'S' || r == 's'):
			unit = time.Second
		default:
			return 0, bad
		}
		total += time.Duration(f * float64(unit))
		num, any = "", true
	}
	if num != "" || !any {
		return 0, bad
	}
	return total, nil
}
