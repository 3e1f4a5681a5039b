package transforms

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Java's numeric conversions, which Kafka's Cast and MaskField inherit:
// a double narrows to int or long saturating (NaN to 0), and an int or
// long narrows to byte or short by dropping high bits.

func doubleToLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

func doubleToInt(f float64) int32 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

// javaDouble formats as Java's Double.toString (Float.toString for
// bits=32): plain notation with at least one fraction digit for
// magnitudes in [1e-3, 1e7), else d.dddE±n.
func javaDouble(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, bits) // d.ddde+XX
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// decimalString is Java's BigDecimal.toString: plain unless the scale is
// negative or the adjusted exponent is below -6, then scientific.
func decimalString(unscaled *big.Int, scale int) string {
	if unscaled == nil {
		unscaled = new(big.Int)
	}
	digits := new(big.Int).Abs(unscaled).String()
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	adjusted := -scale + len(digits) - 1
	if scale >= 0 && adjusted >= -6 {
		if scale == 0 {
			return sign + digits
		}
		if len(digits) <= scale {
			return sign + "0." + strings.Repeat("0", scale-len(digits)) + digits
		}
		return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	mant := digits[:1]
	if len(digits) > 1 {
		mant += "." + digits[1:]
	}
	exp := strconv.Itoa(adjusted)
	if adjusted >= 0 {
		exp = "+" + exp
	}
	return sign + mant + "E" + exp
}

// decimalTruncated is a decimal's integer part (toward zero), and its low
// 64 bits as Java's BigDecimal.longValue gives them.
func decimalLong(unscaled *big.Int, scale int) int64 {
	if unscaled == nil {
		return 0
	}
	n := new(big.Int).Set(unscaled)
	if scale > 0 {
		n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	} else if scale < 0 {
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
	}
	// Two's complement low 64 bits.
	mod := new(big.Int).Lsh(big.NewInt(1), 64)
	n.Mod(n, mod)
	return int64(n.Uint64())
}

func decimalFloat(unscaled *big.Int, scale int) float64 {
	if unscaled == nil {
		return 0
	}
	r := new(big.Rat).SetInt(unscaled)
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(scale))), nil))
	if scale > 0 {
		r.Quo(r, p)
	} else {
		r.Mul(r, p)
	}
	f, _ := r.Float64()
	return f
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
