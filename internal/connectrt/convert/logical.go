package convert

import (
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// dataErrorf is Kafka's DataException: data that does not fit its schema
// or its format.
func dataErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{connect.ErrData}, args...)...)
}

const millisPerDay = 24 * 60 * 60 * 1000

// decimalScale is a Decimal schema's scale parameter.
func decimalScale(s *connect.Schema) (int, error) {
	raw, ok := s.Parameters[connect.DecimalScale]
	if !ok {
		return 0, dataErrorf("Invalid Decimal schema: scale parameter not found.")
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, dataErrorf("Invalid scale parameter found in Decimal schema: %q", raw)
	}
	return n, nil
}

// decimalToBytes is Kafka's Decimal.fromLogical: the unscaled value in
// big-endian two's complement, the fewest bytes that hold it; the value's
// scale must be the schema's.
func decimalToBytes(s *connect.Schema, d connect.Decimal) ([]byte, error) {
	scale, err := decimalScale(s)
	if err != nil {
		return nil, err
	}
	if d.Scale != scale {
		return nil, dataErrorf("BigDecimal has mismatching scale value for given Decimal schema")
	}
	return twosComplement(d.Unscaled), nil
}

// twosComplement is Java's BigInteger.toByteArray.
func twosComplement(n *big.Int) []byte {
	if n == nil || n.Sign() == 0 {
		return []byte{0}
	}
	if n.Sign() > 0 {
		b := n.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n = ^(n-1): write |n|-1, invert every bit, add a 0xff byte when the
	// top bit would read as positive.
	m := new(big.Int).Sub(new(big.Int).Neg(n), big.NewInt(1))
	b := m.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

// fromTwosComplement reads big-endian two's complement bytes.
func fromTwosComplement(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b)*8)))
	}
	return n
}

// decimalFromBytes is Kafka's Decimal.toLogical.
func decimalFromBytes(s *connect.Schema, b []byte) (connect.Decimal, error) {
	scale, err := decimalScale(s)
	if err != nil {
		return connect.Decimal{}, err
	}
	return connect.Decimal{Unscaled: fromTwosComplement(b), Scale: scale}, nil
}

// dateToDays is Kafka's Date.fromLogical: days since the epoch of a time
// at midnight UTC.
func dateToDays(t time.Time) (int32, error) {
	ms := t.UnixMilli()
	if ms%millisPerDay != 0 || t.Nanosecond()%int(time.Millisecond) != 0 {
		return 0, dataErrorf("Kafka Connect Date type should not have any time fields set to non-zero values.")
	}
	return int32(ms / millisPerDay), nil
}

// timeToMillis is Kafka's Time.fromLogical: milliseconds since midnight of
// a time on the epoch's day.
func timeToMillis(t time.Time) (int32, error) {
	ms := t.UnixMilli()
	if ms < 0 || ms >= millisPerDay {
		return 0, dataErrorf("Kafka Connect Time type should not have any date fields set to non-zero values.")
	}
	return int32(ms), nil
}

func daysToDate(days int64) time.Time { return time.UnixMilli(days * millisPerDay).UTC() }
func millisToTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// logicalName is the schema's logical type name when it is one Kafka
// defines, else "".
func logicalName(s *connect.Schema) string {
	if s == nil {
		return ""
	}
	switch s.Name {
	case connect.DecimalName, connect.DateName, connect.TimeName, connect.TimestampName:
		return s.Name
	}
	return ""
}
