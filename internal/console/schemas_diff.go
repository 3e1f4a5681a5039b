package console

// schemasDiffLine is one line of a line diff: Op is ' ' (in both), '-'
// (only in the old text) or '+' (only in the new one).
type schemasDiffLine struct {
	Op   byte
	Text string
	Old  int // the line's number in the old text, 0 for an added line
	New  int // its number in the new text, 0 for a removed line
}

// Sign is the line's marker for the page.
func (l schemasDiffLine) Sign() string { return string(l.Op) }

// schemasDiffMaxCells bounds the LCS table (the lines left once the
// common head and tail are trimmed, multiplied): two schemas of a few
// thousand changed lines each. Past it the middle is shown as removed
// then added, still a correct if not minimal diff.
const schemasDiffMaxCells = 4 << 20

// schemasLineDiff is a line diff of a and b by their longest common
// subsequence: the common head and tail trimmed first, as schema
// versions mostly differ in a few lines.
func schemasLineDiff(a, b []string) []schemasDiffLine {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	out := make([]schemasDiffLine, 0, len(a)+len(b))
	for i := range head {
		out = append(out, schemasDiffLine{Op: ' ', Text: a[i], Old: i + 1, New: i + 1})
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	oi, ni := head, head // lines emitted so far of a and b
	emit := func(op byte, text string) {
		l := schemasDiffLine{Op: op, Text: text}
		switch op {
		case ' ':
			oi, ni = oi+1, ni+1
			l.Old, l.New = oi, ni
		case '-':
			oi++
			l.Old = oi
		case '+':
			ni++
			l.New = ni
		}
		out = append(out, l)
	}
	if len(ma)*len(mb) > schemasDiffMaxCells {
		for _, s := range ma {
			emit('-', s)
		}
		for _, s := range mb {
			emit('+', s)
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
				emit(' ', ma[i])
				i, j = i+1, j+1
			case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
				// Removals first when both are as long: "-" then "+".
				if i < n && lcs[i+1][j] == lcs[i][j+1] {
					emit('-', ma[i])
					i++
				} else {
					emit('+', mb[j])
					j++
				}
			default:
				emit('-', ma[i])
				i++
			}
		}
	}
	for k := range tail {
		emit(' ', a[len(a)-tail+k])
	}
	return out
}
