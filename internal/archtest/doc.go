// Package archtest holds tests that keep the tree shaped as
// docs/ARCHITECTURE.md draws it: they read the layer of every package from
// that page's table, fail when a package imports a layer above it, and
// fail when the table and the tree disagree. It has no code of its own.
package archtest
