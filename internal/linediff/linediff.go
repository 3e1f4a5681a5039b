package linediff

// Op says where a line of a diff stands.
type Op byte

// The ops, as a diff marks its lines.
const (
	Same    Op = ' ' // in both texts
	Removed Op = '-' // only in the old text
	Added   Op = '+' // only in the new text
)

// Line is one line of a diff.
type Line struct {
	Op   Op
	Text string
	Old  int // the line's number in the old text, 0 for an added line
	New  int // its number in the new text, 0 for a removed line
}

// Sign is the line's marker: " ", "-" or "+".
func (l Line) Sign() string { return string(l.Op) }

// MaxCells bounds the LCS table (the lines left once the common head and
// tail are trimmed, multiplied): two texts of a few thousand changed
// lines each. Past it the middle is given as removed then added, still a
// correct if not minimal diff.
const MaxCells = 4 << 20

// Diff is the line diff of a and b by their longest common subsequence,
// the common head and tail trimmed first (versions of a text mostly
// differ in a few lines). Where a line is replaced, the removal comes
// before the addition.
func Diff(a, b []string) []Line {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	out := make([]Line, 0, len(a)+len(b))
	for i := range head {
		out = append(out, Line{Op: Same, Text: a[i], Old: i + 1, New: i + 1})
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	oi, ni := head, head // lines emitted so far of a and b
	emit := func(op Op, text string) {
		l := Line{Op: op, Text: text}
		switch op {
		case Same:
			oi, ni = oi+1, ni+1
			l.Old, l.New = oi, ni
		case Removed:
			oi++
			l.Old = oi
		case Added:
			ni++
			l.New = ni
		}
		out = append(out, l)
	}
	if len(ma)*len(mb) > MaxCells {
		for _, s := range ma {
			emit(Removed, s)
		}
		for _, s := range mb {
			emit(Added, s)
		}
	} else {
		// lcs[i][j] is the LCS length of ma[i:] and mb[j:].
		n, m := len(ma), len(mb)
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				emit(Same, ma[i])
				i, j = i+1, j+1
			case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
				// Removals first when both are as long: "-" then "+".
				if i < n && lcs[i+1][j] == lcs[i][j+1] {
					emit(Removed, ma[i])
					i++
				} else {
					emit(Added, mb[j])
					j++
				}
			default:
				emit(Removed, ma[i])
				i++
			}
		}
	}
	for k := range tail {
		emit(Same, a[len(a)-tail+k])
	}
	return out
}
