// Package linediff owns the line diff of two texts: the edit script of
// their longest common subsequence, each line kept, removed or added and
// numbered in its text. Its callers render it (the console's schema diff
// page, `samsa schema diff`). A leaf: the standard library only.
package linediff
