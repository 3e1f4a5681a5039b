// Package archtest holds tests that keep the tree shaped as
// ../shared/ARCHITECTURE.md draws it. It has no code of its own.
package archtest
